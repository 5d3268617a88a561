"""Generate Blender's own Rigify human with a simple body, for demos and ``--rig rigify``."""

from __future__ import annotations

import bpy
import numpy as np

from .. import writers

#: Radii (metres) of the simple body drawn on a generated Rigify character, by deform bone prefix.
_BODY_RADII = (
    ("DEF-spine.006", 0.0),
    ("DEF-spine.005", 0.045),
    ("DEF-spine.004", 0.05),
    ("DEF-spine", 0.12),
    ("DEF-shoulder", 0.045),
    ("DEF-upper_arm", 0.05),
    ("DEF-forearm", 0.04),
    ("DEF-hand", 0.035),
    ("DEF-thigh", 0.075),
    ("DEF-shin", 0.055),
    ("DEF-foot", 0.045),
    ("DEF-toe", 0.035),
)


def generate_rigify_character(context: bpy.types.Context, name: str = "Rigify Character") -> bpy.types.Object:
    """Blender's own Rigify human, generated here (the metarig removed), with a simple skinless body
    of capsules parented to its deform bones so that it renders: a stand-in for your character."""
    import addon_utils

    from ...addon.juggling.meshes import limb, sphere

    addon_utils.enable("rigify", default_set=True)
    bpy.ops.object.armature_human_metarig_add()
    metarig = context.view_layer.objects.active
    bpy.ops.pose.rigify_generate()
    rig = context.view_layer.objects.active
    bpy.data.objects.remove(metarig)
    rig.name = name
    skin = writers.principled_material("Character Skin", (0.80, 0.58, 0.45, 1.0), roughness=0.6)
    cloth = writers.principled_material("Character Clothes", (0.55, 0.20, 0.25, 1.0), roughness=0.8)
    collection = rig.users_collection[0]
    for bone in rig.data.bones:
        radius = next((r for prefix, r in _BODY_RADII if bone.name.startswith(prefix)), None)
        if not bone.use_deform or radius is None:
            continue
        if bone.name.startswith("DEF-spine.006"):
            vertices, faces = sphere(0.11)
            vertices = vertices + np.array([0.0, 0.45 * bone.length, 0.0])
        else:
            vertices, faces = limb(radius, bone.length)
        part = writers.new_object(
            f"{name} {bone.name}", writers.mesh_from_arrays(bone.name, vertices, faces), collection
        )
        part.parent = rig
        part.parent_type = "BONE"
        part.parent_bone = bone.name
        part.location = (0.0, -bone.length, 0.0)
        bare = any(k in bone.name for k in ("hand", "forearm", "spine.006", "spine.005", "spine.004"))
        writers.assign_material(part, skin if bare else cloth)
        for polygon in part.data.polygons:
            polygon.use_smooth = True
    context.view_layer.update()
    return rig
