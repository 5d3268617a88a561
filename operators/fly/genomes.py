"""Genome files: where a trained genome goes or comes from, its training curve, Load/Save Genome."""

from __future__ import annotations

import os
from pathlib import Path

import bpy
from bpy.props import StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ...addon.fly import load_genome, save_genome
from ...addon.plotting import line_plot_png
from .. import paths, writers
from .._base import ProcAnimOperator
from ..preferences import preferences
from .constants import (
    CURVE_IMAGE,
    DEFAULT_OUTPUT,
    SHIPPED_GENOME,
    SHIPPED_STEERING_GENOME,
)


def resolve_output(path: str, default_name: str) -> Path:
    """The trained genome's file; '//' without a saved .blend means Blender's temporary folder.

    Left empty or at its default, it goes to the preferences' genome folder.
    """
    if not path or path == DEFAULT_OUTPUT:
        prefs = preferences()
        folder = (prefs.genome_directory if prefs is not None else "") or "//"
        path = os.path.join(folder, default_name) if folder != "//" else "//" + default_name
    return paths.output_file(path, "Genome output", ".npz", unsaved_fallback=paths.temporary_folder())


def genome_file(path: str, steering: bool = False) -> Path:
    """The genome to fly: the given file, else the shipped steering (with a target) or hovering one."""
    if path:
        return paths.input_file(path, "Genome file")
    return SHIPPED_STEERING_GENOME if steering else SHIPPED_GENOME


def checkpoint_folder(genome_path: Path) -> Path:
    return genome_path.with_name(genome_path.stem + "_checkpoints")


def population_file(genome_path: Path) -> Path:
    return genome_path.with_name(genome_path.stem + "_population.npz")


def write_curve(path: Path, history: dict[str, list[float]]) -> None:
    generations = list(range(1, len(history["best"]) + 1))
    series = [
        (generations, history["best"], "best", (0, 114, 178)),
        (generations, history["mean"], "mean", (213, 94, 0)),
    ]
    if len(generations) == 1:
        series = [([0.5, 1.5], values * 2, label, color) for _, values, label, color in series]
    line_plot_png(path, series, title="Fly training", xlabel="generation", ylabel="fitness")


def show_curve(path: Path) -> bpy.types.Image:
    return writers.show_image(path, CURVE_IMAGE)


class _GenomeFile:
    """The file-browser properties Load and Save Genome share."""

    filename_ext = ".npz"
    filter_glob: StringProperty(
        name="Filter", description="Genome files", default="*.npz", options={"HIDDEN"}
    )
    # The file browser helpers' own path property warns on "//" in 4.5+; genome paths take it.
    filepath: StringProperty(
        name="File Path",
        description="The genome file (.npz); // is the folder of the saved .blend",
        maxlen=1024,
        subtype="FILE_PATH",
        options=paths.BLEND_RELATIVE,
    )


class PROCANIM_OT_load_genome(_GenomeFile, ProcAnimOperator, ImportHelper, bpy.types.Operator):
    """Load a fly genome (.npz) to bake; the file is checked before it is used"""

    bl_idname = "procanim.load_genome"
    bl_label = "Load Genome"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: bpy.types.Context) -> set[str]:
        source = paths.input_file(self.filepath, "Genome file")
        genome = load_genome(source)
        stored, warning = paths.stored_path(source)
        context.scene.procanim.fly.genome_path = stored
        if warning:
            self.report({"WARNING"}, warning)
        kind = "asymmetric" if genome.asymmetric else "symmetric"
        self.report({"INFO"}, f"Loaded a {kind} {genome.activation} genome ({genome.aero} aerodynamics)")
        return {"FINISHED"}


class PROCANIM_OT_save_genome(_GenomeFile, ProcAnimOperator, ExportHelper, bpy.types.Operator):
    """Save the current fly genome (trained, loaded or shipped) to a .npz file"""

    bl_idname = "procanim.save_genome"
    bl_label = "Save Genome"
    bl_options = {"REGISTER"}

    def run(self, context: bpy.types.Context) -> set[str]:
        genome = load_genome(genome_file(context.scene.procanim.fly.genome_path))
        target = paths.output_file(self.filepath, "Genome file", ".npz")
        paths.make_parent(target, "Genome file")
        path = save_genome(genome, target)
        self.report({"INFO"}, f"Saved genome to {path}")
        return {"FINISHED"}
