"""Sidebar sub-panel of the neuro-evolved fly: add, train (with its curve), load / save, bake."""

from __future__ import annotations

import bpy

from ..operators.fly import CURVE_IMAGE, FlyBakeProperties, FlyTrainingProperties
from .common import GeneratorPanel, copy_settings


class FlySettings(FlyTrainingProperties, FlyBakeProperties, bpy.types.PropertyGroup):
    """Sidebar settings of the fly: training, the genome file and the bake."""


class PROCANIM_PT_fly(GeneratorPanel, bpy.types.Panel):
    """Train a fly to fly and bake its flight"""

    bl_label = "Neuro-evolved Fly"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        settings = context.scene.procanim.fly
        layout.use_property_split = True
        layout.operator("procanim.add_fly", icon="ADD")

        box = layout.box()
        box.label(text="Training", icon="NETWORK_DRIVE")
        column = box.column(align=True)
        for name in ("population", "generations", "train_duration", "fitness"):
            column.prop(settings, name)
        column = box.column(align=True)
        for name in ("crossover", "mutation_rate", "mutation", "mutation_sigma", "sigma", "seed"):
            column.prop(settings, name)
        column = box.column(align=True)
        for name in ("control", "activation", "aero", "asymmetric", "resume", "output_path", "checkpoints"):
            column.prop(settings, name)
        if settings.checkpoints:
            row = column.row(align=True)
            row.prop(settings, "checkpoint_threshold")
            row.prop(settings, "checkpoint_delta")
        copy_settings(settings, box.operator("procanim.train_fly", icon="PLAY"))
        image = bpy.data.images.get(CURVE_IMAGE)
        if image is not None and image.preview is not None:
            box.template_icon(icon_value=image.preview.icon_id, scale=8.0)
        elif image is not None:
            box.label(text=f"Training curve: image '{CURVE_IMAGE}'", icon="IMAGE_DATA")

        box = layout.box()
        box.label(text="Genome", icon="FILE")
        box.prop(settings, "genome_path")
        if not settings.genome_path:
            box.label(text="Empty: the shipped hovering genome", icon="INFO")
        row = box.row(align=True)
        row.operator("procanim.load_genome", icon="IMPORT")
        row.operator("procanim.save_genome", icon="EXPORT")

        box = layout.box()
        box.label(text="Bake", icon="REC")
        box.prop(settings, "duration")
        box.prop_search(settings, "target", context.scene, "objects")
        box.prop(settings, "wing_key_interval")
        box.prop(settings, "follow_camera")
        copy_settings(settings, box.operator("procanim.bake_fly", icon="RENDER_ANIMATION"))


SCENE_SETTINGS = ("fly", FlySettings)
OBJECT_SETTINGS = None
classes = (FlySettings, PROCANIM_PT_fly)
