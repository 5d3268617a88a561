"""Bring the rigs named on the command line (``--rig``) into the scene."""

from __future__ import annotations

from pathlib import Path

import bpy

from .bone_map import rig_names
from .character import generate_rigify_character


def load_cli_rigs(spec: str) -> list[str]:
    """``FILE.blend:Object[,FILE.blend:Object...]`` (or plain object names already in the scene, or
    ``rigify`` for Blender's own Rigify human generated here): bring each armature into the current
    scene; returns the objects' names in this file."""
    from ..cli import CliError

    names = []
    for item in rig_names(spec):
        if item.lower() == "rigify":
            names.append(generate_rigify_character(bpy.context).name)
            continue
        path, _, name = item.rpartition(":") if ".blend:" in item else ("", "", item)
        if not path:
            if name not in bpy.data.objects:
                raise CliError(f"--rig: no object {name!r} in the scene (use FILE.blend:OBJECT)")
            names.append(name)
            continue
        file = Path(bpy.path.abspath(path)).expanduser()
        if not file.is_file():
            raise CliError(f"--rig: no such .blend file: {file}")
        with bpy.data.libraries.load(str(file), link=False) as (source, loaded):
            if name not in source.objects:
                shown = ", ".join(sorted(source.objects)[:12])
                raise CliError(f"--rig: {file.name} has no object {name!r} (it has {shown})")
            loaded.objects = [name]
        obj = loaded.objects[0]
        if obj.type != "ARMATURE":
            raise CliError(f"--rig: {name!r} in {file.name} is a {obj.type.lower()}, not an armature")
        bpy.context.scene.collection.objects.link(obj)
        names.append(obj.name)
    bpy.context.view_layer.update()
    return names


# ------------------------------------------------------------------------------------ IK chains
