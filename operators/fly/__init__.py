"""The neuro-evolved fly in Blender: add the model, train a controller, bake its flight.

The trained genome lives in a .npz file whose path is kept on the scene settings
(``Scene.procanim.fly.genome_path``), never inside the .blend; an empty path means the genome
shipped in ``presets/fly/hover.npz``.

The package: ``constants`` (shared names and shipped genome files), ``properties`` (training and
baking properties the sidebar reuses), ``genomes`` (genome files, Load/Save Genome), ``scene`` (the
fly's objects, camera, floor and target), ``operators`` (Add, Train, Bake Fly), ``cli`` (headless
subcommand).
"""

from .cli import _cli_bake, _cli_train, _train_in_process, _train_on_dask, add_cli
from .constants import (
    BAKED_FLIGHT_SECONDS_PER_SECOND,
    COLLECTION,
    CURVE_IMAGE,
    DEFAULT_OUTPUT,
    MIN_KEY_SPACING,
    PART_KEY,
    PATH_OPTIONS,
    SHIPPED_GENOME,
    SHIPPED_STEERING_GENOME,
    SIZE_KEY,
    STROKE_HOVER_GENOME,
    STROKE_STEERING_GENOME,
    WING_MATERIAL,
)
from .genomes import (
    PROCANIM_OT_load_genome,
    PROCANIM_OT_save_genome,
    checkpoint_folder,
    genome_file,
    population_file,
    resolve_output,
    show_curve,
    write_curve,
)
from .operators import PROCANIM_OT_add_fly, PROCANIM_OT_bake_fly, PROCANIM_OT_train_fly
from .properties import (
    ACTIVATION_ITEMS,
    AERO_ITEMS,
    CONTROL_ITEMS,
    FITNESS_ITEMS,
    MUTATION_ITEMS,
    FlyBakeProperties,
    FlyTrainingProperties,
)
from .scene import (
    add_checker_ground,
    add_follow_camera,
    add_looping_target,
    blur_wings,
    build_fly,
    fly_parts,
    fly_scale,
    sample_target,
    veined_wing_material,
)

classes = (
    PROCANIM_OT_add_fly,
    PROCANIM_OT_train_fly,
    PROCANIM_OT_bake_fly,
    PROCANIM_OT_load_genome,
    PROCANIM_OT_save_genome,
)

__all__ = [
    "ACTIVATION_ITEMS",
    "AERO_ITEMS",
    "BAKED_FLIGHT_SECONDS_PER_SECOND",
    "COLLECTION",
    "CONTROL_ITEMS",
    "CURVE_IMAGE",
    "DEFAULT_OUTPUT",
    "FITNESS_ITEMS",
    "FlyBakeProperties",
    "FlyTrainingProperties",
    "MIN_KEY_SPACING",
    "MUTATION_ITEMS",
    "PART_KEY",
    "PATH_OPTIONS",
    "PROCANIM_OT_add_fly",
    "PROCANIM_OT_bake_fly",
    "PROCANIM_OT_load_genome",
    "PROCANIM_OT_save_genome",
    "PROCANIM_OT_train_fly",
    "SHIPPED_GENOME",
    "SHIPPED_STEERING_GENOME",
    "SIZE_KEY",
    "STROKE_HOVER_GENOME",
    "STROKE_STEERING_GENOME",
    "WING_MATERIAL",
    "_cli_bake",
    "_cli_train",
    "_train_in_process",
    "_train_on_dask",
    "add_checker_ground",
    "add_cli",
    "add_follow_camera",
    "add_looping_target",
    "blur_wings",
    "build_fly",
    "checkpoint_folder",
    "classes",
    "fly_parts",
    "fly_scale",
    "genome_file",
    "population_file",
    "resolve_output",
    "sample_target",
    "show_curve",
    "veined_wing_material",
    "write_curve",
]
