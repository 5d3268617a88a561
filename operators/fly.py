"""The neuro-evolved fly in Blender: add the model, train a controller, bake its flight.

The trained genome lives in a .npz file whose path is kept on the scene settings
(``Scene.procanim.fly.genome_path``), never inside the .blend; an empty path means the genome
shipped in ``presets/fly/hover.npz``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper

from ..addon import limits, quaternions
from ..addon.fly import FlyModel, load_genome, save_genome, simulate_genomes_steps
from ..addon.fly.errors import FlyError
from ..addon.fly.fitness import mean_lateral_drift
from ..addon.fly.looks import body_parts_mesh, legs_mesh, wing_outline_mesh
from ..addon.fly.model import rotate_about_z, wing_quaternions, yaw_quaternion
from ..addon.fly.training import TrainingConfig, TrainingResult, new_population, train_steps
from ..addon.plotting import line_plot_png
from . import paths, writers
from ._base import BakeOperator, ProcAnimOperator
from .cli import COMMON, CliError, call_operator
from .preferences import preferences

SHIPPED_GENOME = Path(__file__).resolve().parent.parent / "presets" / "fly" / "hover.npz"
SHIPPED_STEERING_GENOME = SHIPPED_GENOME.with_name("steer.npz")
STROKE_HOVER_GENOME = SHIPPED_GENOME.with_name("stroke_hover.npz")
STROKE_STEERING_GENOME = SHIPPED_GENOME.with_name("stroke_steer.npz")
SIZE_KEY = "procanim_fly_size"
WING_MATERIAL = "Fly Wing Veined"
MIN_KEY_SPACING = 0.011  # frames: Blender treats keys within 0.01 frame of each other as one
COLLECTION = "Fly"
PART_KEY = "procanim_fly_part"
DEFAULT_OUTPUT = "//fly_trained.npz"
CURVE_IMAGE = "ProcAnim Fly Training"
# 4.5+ warns on "//" paths unless the property says it takes blend-relative paths; 4.2 has no such flag
PATH_OPTIONS = paths.BLEND_RELATIVE
#: Seconds of flight simulated and keyed per wall-clock second (1 ms steps, wing keys every 2 ms),
#: measured on a busy 2-core machine.
BAKED_FLIGHT_SECONDS_PER_SECOND = 2.0

FITNESS_ITEMS = (
    (
        "FINAL_HEIGHT_MINUS_DRIFT",
        "Height minus Drift",
        "Final height minus a fifth of the mean sideways deviation (the paper's best fitness)",
    ),
    (
        "UPRIGHT_HEIGHT_MINUS_DRIFT",
        "Upright Height minus Drift",
        "Final height minus twice the sideways drift and a penalty for a tilted or tumbling body",
    ),
    (
        "LEVEL_HEIGHT_MINUS_DRIFT",
        "Level Height minus Drift",
        "Like Upright, with climbing capped, a heavier tilt penalty, a steep one past about 57 degrees and "
        "one for sinking below the start (a level body)",
    ),
    ("FINAL_HEIGHT", "Final Height", "Height at the end of the flight"),
    ("MEAN_HEIGHT", "Mean Height", "Average height over the flight (the paper's first try)"),
    (
        "HOLD_LEVEL",
        "Hold Level",
        "Hover in place with a steady body: drift, altitude error, tilt spread and tilt swing, each "
        "against its limit (2 cm, 5 cm, 0.1 rad, 0.3 rad); for the wing-beat generator",
    ),
    (
        "TOWARD_TARGET",
        "Toward Target",
        "Minus the mean distance to a random target point per generation (a steerable fly)",
    ),
)
MUTATION_ITEMS = (
    ("PERTURB", "Perturb", "Add Gaussian noise to the mutated genes (learns faster)"),
    ("RESET", "Reset", "Replace mutated genes by new random values (as in the paper)"),
)
ACTIVATION_ITEMS = (
    ("TANH", "tanh", "Hyperbolic tangent, as in the paper"),
    ("SIGMOID", "Sigmoid", "Logistic function"),
    ("RELU", "ReLU", "Rectified linear unit"),
)
CONTROL_ITEMS = (
    (
        "DIRECT",
        "Wing Angles (paper)",
        "The network sets the next wing angles of the paper's 2 cm cartoon fly",
    ),
    (
        "STROKE",
        "Wing-Beat Generator",
        "The network sets each wing's beat (frequency, amplitude, mean stroke, pitch, rotation timing) "
        "of a real-size fruit fly beating 150-250 times a second; use Quasi-steady aerodynamics",
    ),
)
AERO_ITEMS = (
    ("DRAG", "Drag (paper)", "F = 1/2 rho v|v| C_D A with projected area and cosine C_D"),
    ("QUASI_STEADY", "Quasi-steady", "Lift and drag with the Dickinson 1999 coefficients"),
)


class FlyTrainingProperties:
    """Training settings shared by the sidebar group and the train operator (same names)."""

    population: IntProperty(
        name="Population", description="Flies per generation", default=100, min=4, max=5000, soft_max=500
    )
    generations: IntProperty(
        name="Generations", description="Generations to train", default=30, min=1, max=100_000, soft_max=2000
    )
    fitness: EnumProperty(
        name="Fitness",
        description="What a good flight is",
        items=FITNESS_ITEMS,
        default="FINAL_HEIGHT_MINUS_DRIFT",
    )
    train_duration: FloatProperty(
        name="Flight Time",
        description="Simulated seconds per training flight",
        default=2.0,
        min=0.05,
        max=60.0,
        unit="TIME_ABSOLUTE",
    )
    crossover: FloatProperty(
        name="Crossover",
        description="Probability that a child's gene comes from its first parent",
        default=0.5,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
    )
    mutation_rate: FloatProperty(
        name="Mutation Rate",
        description="Probability that a child's gene mutates",
        default=0.05,
        min=0.0,
        max=1.0,
        subtype="FACTOR",
    )
    mutation: EnumProperty(
        name="Mutation", description="How a mutated gene changes", items=MUTATION_ITEMS, default="PERTURB"
    )
    mutation_sigma: FloatProperty(
        name="Mutation Sigma",
        description="Standard deviation of mutation noise",
        default=0.3,
        min=1e-4,
        soft_max=3.0,
    )
    sigma: FloatProperty(
        name="Initial Sigma",
        description="Standard deviation of the random first genomes",
        default=1.0,
        min=1e-4,
        soft_max=5.0,
    )
    seed: IntProperty(
        name="Seed", description="Random seed; the same seed gives the same training", default=0, min=0
    )
    activation: EnumProperty(
        name="Activation", description="Neuron non-linearity", items=ACTIVATION_ITEMS, default="TANH"
    )
    aero: EnumProperty(name="Aerodynamics", description="Wing force model", items=AERO_ITEMS, default="DRAG")
    control: EnumProperty(
        name="Control",
        description="What the network sets every 10 ms",
        items=CONTROL_ITEMS,
        default="DIRECT",
    )
    asymmetric: BoolProperty(
        name="Asymmetric Wings",
        description="Control each wing separately (18 inputs, 6 outputs) instead of "
        "mirrored wings (15 inputs, 3 outputs)",
        default=False,
    )
    checkpoints: BoolProperty(
        name="Checkpoints",
        description="Save the best genome to <output>_checkpoints/ each time the best fitness passes the "
        "threshold, then raise the threshold by the step",
        default=False,
    )
    checkpoint_threshold: FloatProperty(
        name="Threshold", description="Best fitness that triggers the first checkpoint", default=0.5
    )
    checkpoint_delta: FloatProperty(
        name="Step", description="How much the threshold rises after each checkpoint", default=0.1, min=1e-4
    )
    resume: BoolProperty(
        name="Resume",
        description="Continue from the population saved by the last training "
        "next to the output genome, possibly with other settings",
        default=False,
    )
    output_path: StringProperty(
        name="Save To",
        description="Where the trained genome is written (.npz); "
        "// is next to the .blend, or the temporary folder when unsaved",
        default=DEFAULT_OUTPUT,
        subtype="FILE_PATH",
        options=PATH_OPTIONS,
    )


class FlyBakeProperties:
    """Bake settings shared by the sidebar group and the bake operator."""

    duration: FloatProperty(
        name="Duration",
        description="Seconds of flight to bake",
        default=30.0,
        min=0.05,
        max=3600.0,
        soft_max=120.0,
        unit="TIME_ABSOLUTE",
    )
    genome_path: StringProperty(
        name="Genome",
        description="Genome file (.npz) to fly; empty uses the trained or the shipped hovering genome",
        default="",
        subtype="FILE_PATH",
        options=PATH_OPTIONS,
    )
    target: StringProperty(
        name="Target",
        description="Object the fly steers toward (its animated position "
        "is sampled every frame); empty flies freely",
        default="",
    )
    wing_key_interval: FloatProperty(
        name="Wing Key Step",
        description="Milliseconds between wing keys (wing beats are faster than frames, so wings get "
        "sub-frame keys); 0 is automatic: 2 ms for the paper's slow beat, and for a fruit fly beating "
        "at 200 Hz as often as Blender keeps keys apart (0.01 frame: 0.6 ms at 24 fps, 8 keys a beat)",
        default=0.0,
        min=0.0,
        max=100.0,
    )
    follow_camera: BoolProperty(
        name="Follow Camera", description="Add a camera and light that follow the fly", default=False
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


def fly_parts(source: bpy.types.Context | bpy.types.Collection | None) -> dict[str, bpy.types.Object]:
    """The parts of one fly: of an instance collection, or of the fly the user selected."""
    collection = source
    if source is not None and not isinstance(source, bpy.types.Collection):
        collection = writers.selected_instance(source, COLLECTION)
    if collection is None:
        return {}
    return {obj[PART_KEY]: obj for obj in collection.all_objects if PART_KEY in obj}


def build_fly(
    context: bpy.types.Context, location=(0.0, 0.0, 0.0), model: FlyModel | None = None
) -> dict[str, bpy.types.Object]:
    """A new fly instance, the body at ``location`` (world), selected and active.

    The body is smooth head, thorax and abdomen just filling the simulated body box, with legs as
    a child; the wings are the simulated planform (finely cut, with UVs for the veined material),
    hinged where the simulation hinges them.
    """
    model = model or FlyModel()
    collection = writers.new_instance(context, COLLECTION)
    body_material = writers.principled_material("Fly Body", (0.09, 0.06, 0.04, 1.0), roughness=0.35)
    eye_material = writers.principled_material("Fly Eyes", (0.45, 0.03, 0.02, 1.0), roughness=0.25)
    wing_material = veined_wing_material()
    vertices, faces, materials = body_parts_mesh(model)
    body_data = writers.mesh_from_arrays("Fly Body", vertices, faces)
    body_data.materials.append(body_material)
    body_data.materials.append(eye_material)
    body_data.polygons.foreach_set("material_index", materials)
    body_data.polygons.foreach_set("use_smooth", np.ones(len(faces), dtype=bool))
    body = writers.new_object("Fly Body", body_data, collection)
    body.location = location
    body.rotation_mode = "QUATERNION"
    body[PART_KEY] = "body"
    body[SIZE_KEY] = model.size
    vertices, faces = legs_mesh(model)
    legs = writers.new_object("Fly Legs", writers.mesh_from_arrays("Fly Legs", vertices, faces), collection)
    writers.assign_material(legs, body_material)
    legs.parent = body
    legs[PART_KEY] = "legs"
    parts = {"body": body, "legs": legs}
    for key, left, label in (("wing_r", False, "Fly Wing R"), ("wing_l", True, "Fly Wing L")):
        vertices, faces, uv = wing_outline_mesh(model, left)
        mesh = writers.mesh_from_arrays(label, vertices, faces)
        layer = mesh.uv_layers.new(name="UVMap")
        corners = np.array([index for face in faces for index in face])
        layer.data.foreach_set("uv", uv[corners].astype(np.float32).ravel())
        wing = writers.new_object(label, mesh, collection)
        writers.assign_material(wing, wing_material)
        wing.parent = body
        wing.location = np.array(model.hinge) * (np.array([-1.0, 1.0, 1.0]) if left else 1.0)
        wing.rotation_mode = "QUATERNION"
        wing[PART_KEY] = key
        parts[key] = wing
    writers.select_only(context, [body], body)
    return parts


def veined_wing_material() -> bpy.types.Material:
    """Clear, faintly iridescent membrane with dark veins fanning from the hinge (EEVEE and Cycles).

    The veins are drawn from the wing's UVs (u along the span, v across the chord): the costa on
    the leading edge, longitudinal veins on rays from the hinge and two cross-veins.
    """
    existing = bpy.data.materials.get(WING_MATERIAL)
    if existing is not None and existing.get(PART_KEY) == "wing_material":
        return existing
    material = writers.principled_material(WING_MATERIAL, (0.78, 0.84, 0.9, 0.25), roughness=0.15)
    material[PART_KEY] = "wing_material"
    material.diffuse_color = (0.78, 0.84, 0.9, 0.35)  # Workbench / viewport
    if hasattr(material, "surface_render_method"):  # EEVEE Next (4.2+)
        material.surface_render_method = "BLENDED"
    if hasattr(material, "blend_method"):  # legacy EEVEE, still read by some versions
        try:
            material.blend_method = "BLEND"
        except (TypeError, AttributeError):
            pass
    material.use_backface_culling = False
    nodes, links = material.node_tree.nodes, material.node_tree.links
    bsdf = next(node for node in nodes if node.type == "BSDF_PRINCIPLED")
    uv = nodes.new("ShaderNodeTexCoord")
    split = nodes.new("ShaderNodeSeparateXYZ")
    links.new(uv.outputs["UV"], split.inputs[0])

    def math(operation, a, b=None, clamp=False):
        node = nodes.new("ShaderNodeMath")
        node.operation = operation
        node.use_clamp = clamp
        for slot, value in ((0, a), (1, b)):
            if value is None:
                continue
            if isinstance(value, (int, float)):
                node.inputs[slot].default_value = value
            else:
                links.new(value, node.inputs[slot])
        return node.outputs[0]

    u, v = split.outputs[0], split.outputs[1]
    # longitudinal veins: thin where sin(9 * angle from the span axis) crosses zero
    angle = math("ARCTAN2", v, math("ADD", u, 0.02))
    rays = math("LESS_THAN", math("ABSOLUTE", math("SINE", math("MULTIPLY", angle, 9.0))), 0.07)
    radius = math("SQRT", math("ADD", math("MULTIPLY", u, u), math("MULTIPLY", v, v)))
    cross = math("LESS_THAN", math("ABSOLUTE", math("SUBTRACT", radius, 0.42)), 0.008)
    cross_outer = math("LESS_THAN", math("ABSOLUTE", math("SUBTRACT", radius, 0.62)), 0.006)
    costa = math("LESS_THAN", v, 0.035)
    veins = math(
        "MAXIMUM", math("MAXIMUM", rays, costa), math("MAXIMUM", math("MULTIPLY", cross, 1.0), cross_outer)
    )
    # the membrane lets most light through (a motion-blurred beat still shows); veins are dark, nearly opaque
    alpha = math("ADD", 0.35, math("MULTIPLY", veins, 0.6), clamp=True)
    links.new(alpha, bsdf.inputs["Alpha"])
    tint = nodes.new("ShaderNodeMix") if bpy.app.version >= (3, 4, 0) else None
    if tint is not None:
        tint.data_type = "RGBA"
        links.new(veins, tint.inputs["Factor"])
        tint.inputs[6].default_value = (0.78, 0.84, 0.9, 1.0)  # A: membrane
        tint.inputs[7].default_value = (0.12, 0.08, 0.05, 1.0)  # B: vein
        links.new(tint.outputs[2], bsdf.inputs["Base Color"])
    coat = bsdf.inputs.get("Coat Weight")
    if coat is not None:
        coat.default_value = 0.4  # the thin-film sheen of a real wing, roughly
    return material


class PROCANIM_OT_add_fly(ProcAnimOperator, bpy.types.Operator):
    """Add a fly: a box body and two hinged wing plates matching the simulated geometry"""

    bl_idname = "procanim.add_fly"
    bl_label = "Add Fly"
    bl_options = {"REGISTER", "UNDO"}

    location: bpy.props.FloatVectorProperty(
        name="Location",
        description="Where the fly starts, from the 3D cursor (metres)",
        default=(0.0, 0.0, 1.0),
        subtype="TRANSLATION",
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        if not np.all(np.isfinite(self.location)):
            raise FlyError("Fly location must be finite")
        stage = writers.stage_for(context)
        start = np.asarray(self.location) + np.asarray(context.scene.cursor.location)
        # the fly the current genome flies: the paper's cartoon fly or a real-size fruit fly
        model = load_genome(genome_file(context.scene.procanim.fly.genome_path)).model()
        parts = build_fly(context, tuple(start), model)
        if stage.camera:
            # The fly is small and flies off: only a camera that follows it shows it.
            drop = 0.15 if model.size == "fruit_fly" else 0.3
            add_follow_camera(context.scene, parts["body"], float(start[2]) - drop, ground=stage.floor)
        length = model.body_size[1] * 1000.0
        self.report({"INFO"}, f"Added a fly (body {length:g} mm long); bake it to watch it fly")
        return {"FINISHED"}


class PROCANIM_OT_train_fly(FlyTrainingProperties, BakeOperator, bpy.types.Operator):
    """Evolve a fly controller with the genetic algorithm; Esc stops and keeps the best so far"""

    bl_idname = "procanim.train_fly"
    bl_label = "Train Fly"
    bl_options = {"REGISTER", "UNDO"}

    def config(self) -> TrainingConfig:
        return TrainingConfig(
            population=self.population,
            generations=self.generations,
            fitness=self.fitness.lower(),
            duration=self.train_duration,
            crossover=self.crossover,
            mutation_rate=self.mutation_rate,
            mutation=self.mutation.lower(),
            mutation_sigma=self.mutation_sigma,
            sigma=self.sigma,
            seed=self.seed,
            activation=self.activation.lower(),
            aero=self.aero.lower(),
            asymmetric=self.asymmetric,
            control=self.control.lower(),
        )

    def bake(self, context: bpy.types.Context):
        config = self.config()
        config.check()
        config.check_size(self.time_limit())
        self._output = resolve_output(self.output_path, "fly_trained.npz")
        resume_file = population_file(self._output)
        if self.resume and not resume_file.is_file():
            raise FlyError(f"Nothing to resume: no population file '{resume_file}'")
        population = new_population(config, resume_file if self.resume else None)
        self._result = TrainingResult(population.best, -np.inf)
        self._population = population
        checkpoint_dir = checkpoint_folder(self._output) if self.checkpoints else None
        result = yield from train_steps(
            config,
            population,
            checkpoint_dir=checkpoint_dir,
            fitness_threshold=self.checkpoint_threshold,
            fitness_delta=self.checkpoint_delta,
            result=self._result,
        )
        return result

    def cancel_result(self):
        result = getattr(self, "_result", None)
        if result is None or result.generations == 0:
            return None
        result.stopped_early = True
        return result

    def write(self, context: bpy.types.Context, result: TrainingResult) -> set[str]:
        config = self.config()
        path = save_genome(
            result.best,
            self._output,
            fitness=result.best_fitness,
            seed=config.seed,
            settings=config.settings(),
        )
        self._population.save(population_file(path))
        curve = path.with_name(path.stem + "_curve.png")
        write_curve(curve, result.history)
        show_curve(curve)
        stored, warning = paths.stored_path(path)
        context.scene.procanim.fly.genome_path = stored
        if warning:
            self.report({"WARNING"}, warning)
        self.report(
            {"INFO"},
            f"Trained {result.generations} generations, best fitness "
            f"{result.best_fitness:.3f}; genome saved to {path}",
        )
        return {"FINISHED"}


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


class PROCANIM_OT_bake_fly(FlyBakeProperties, BakeOperator, bpy.types.Operator):
    """Fly a genome (trained, loaded or shipped) and bake body and wing motion as keys"""

    bl_idname = "procanim.bake_fly"
    bl_label = "Bake Fly"
    bl_options = {"REGISTER", "UNDO"}

    def bake(self, context: bpy.types.Context):
        scene = context.scene
        genome = load_genome(genome_file(self.genome_path, steering=bool(self.target)))
        model = genome.model()  # the fly it was trained for: control mode, size, aerodynamics
        step = model.time_step
        body = fly_parts(context).get("body")
        self._instance = body.users_collection[0].name if body is not None else None
        fps = scene.render.fps / scene.render.fps_base
        frame_start = scene.frame_start
        # the flight starts where (and facing where) the fly is at the first frame, even if already baked
        scene.frame_set(frame_start)
        start, yaw = np.array([0.0, 0.0, 1.0]), 0.0
        if body is not None:
            start = np.array(body.matrix_world.translation)
            forward = np.array(body.matrix_world.col[1][:3])
            yaw = float(np.arctan2(-forward[0], forward[1]))
        limits.check_time(
            f"baking {self.duration:g} s of flight",
            self.duration,
            BAKED_FLIGHT_SECONDS_PER_SECOND,
            "bake a shorter flight, or run it from the sidebar or the CLI",
            limit=self.time_limit(),
        )
        steps = int(round(self.duration / step))
        target = None
        if self.target:
            # the simulated fly faces +y; turn the target into its frame, and the flight back below
            target = rotate_about_z(
                sample_target(scene, self.target, frame_start, fps, steps, step), start, -yaw
            )
        self._setup = (model, fps, frame_start, start, yaw)
        flight = yield from simulate_genomes_steps(
            genome, self.duration, model=model, start=start, target=target
        )
        flight.positions = rotate_about_z(flight.positions, start, yaw)
        flight.rotations = quaternions.multiply(yaw_quaternion(yaw), flight.rotations)
        return flight

    def write(self, context: bpy.types.Context, flight) -> set[str]:
        model, fps, frame_start, start, _ = self._setup
        step = model.time_step
        scene = context.scene
        instance = bpy.data.collections.get(self._instance) if self._instance else None
        parts = fly_parts(instance)
        if (
            not {"body", "wing_r", "wing_l"} <= set(parts)
            or parts["body"].get(SIZE_KEY, "cartoon") != model.size
        ):
            parts = build_fly(context, tuple(start), model)
        frame_count = int(np.floor(self.duration * fps + 1e-9)) + 1
        frames = frame_start + np.arange(frame_count)
        samples = np.minimum(
            np.round(np.arange(frame_count) / fps / step).astype(int), flight.positions.shape[1] - 1
        )
        body = parts["body"]
        writers.write_object_transforms(
            body, frames, locations=flight.positions[0, samples], quaternions=flight.rotations[0, samples]
        )
        if self.wing_key_interval > 0 or model.control != "stroke":
            stride = max(1, int(round((self.wing_key_interval or 2.0) * 1e-3 / step)))
        else:
            # Blender merges keys closer than 0.01 frame: key as often as it keeps them apart
            stride = max(1, int(np.ceil(MIN_KEY_SPACING / (step * fps))))
        stride = max(stride, int(np.ceil(MIN_KEY_SPACING / (step * fps))))
        wing_samples = np.arange(0, flight.positions.shape[1], stride)
        wing_frames = frame_start + wing_samples * step * fps
        for index, key in ((0, "wing_r"), (1, "wing_l")):
            angles = flight.wing_angles[0, wing_samples, index]
            writers.write_object_transforms(
                parts[key], wing_frames, quaternions=wing_quaternions(model, angles, left=index == 1)
            )
        writers.set_frame_range(scene, frame_start, int(frames[-1]))
        if self.follow_camera:
            add_follow_camera(scene, body, float(start[2]) - (0.15 if model.size == "fruit_fly" else 0.3))
        climb = float(flight.positions[0, -1, 2] - start[2])
        drift = float(mean_lateral_drift(flight)[0])
        if flight.blown_up[0]:
            self.report({"WARNING"}, "The flight diverged numerically; the fly was frozen where it happened")
        else:
            self.report(
                {"INFO"},
                f"Baked {self.duration:g} s of flight: climbed {climb:.2f} m, mean drift {drift:.2f} m",
            )
        return {"FINISHED"}


def sample_target(
    scene: bpy.types.Scene, name: str, frame_start: int, fps: float, steps: int, step: float = 0.001
) -> np.ndarray:
    """The target object's world position every simulated step, from its position at every frame."""
    target = scene.objects.get(name)
    if target is None:
        raise FlyError(f"Target object '{name}' is not in the scene")
    frame_count = int(np.ceil(steps * step * fps)) + 1
    positions = np.empty((frame_count, 3))
    for index in range(frame_count):
        scene.frame_set(frame_start + index)
        positions[index] = target.matrix_world.translation
    frame_times = np.arange(frame_count) / fps
    times = np.arange(steps + 1) * step
    return np.stack([np.interp(times, frame_times, positions[:, axis]) for axis in range(3)], axis=1)


def add_follow_camera(
    scene: bpy.types.Scene,
    body: bpy.types.Object,
    ground_height: float,
    ground: bool = True,
    scale: float | None = None,
) -> bpy.types.Object:
    """A camera chasing the body over a checkered floor; baking again reuses them.

    ``scale`` (default: from the body's fly size) shrinks the camera offset and floor for a fly
    smaller than the paper's 2 cm one; the floor stays ``ground_height`` below unless scaled too.
    """
    if scale is None:
        scale = fly_scale(body)
    existing = fly_parts(writers.instance_of(body, COLLECTION)).get("camera")
    if existing is not None:
        scene.camera = existing
        return existing
    collection = body.users_collection[0]
    camera = writers.new_object("Fly Camera", bpy.data.cameras.new("Fly Camera"), collection)
    camera[PART_KEY] = "camera"
    camera.data.lens = 50.0 if scale >= 1.0 else 120.0  # a real-size fly fills more of the frame
    camera.data.clip_start = 0.005 * scale
    camera.location = np.array((0.18, -0.32, 0.1)) * scale
    follow = camera.constraints.new("COPY_LOCATION")
    follow.target = body
    follow.use_offset = True
    aim = camera.constraints.new("TRACK_TO")
    aim.target = body
    aim.track_axis = "TRACK_NEGATIVE_Z"
    aim.up_axis = "UP_Y"
    scene.camera = camera
    if not any(obj.type == "LIGHT" for obj in scene.objects):
        writers.add_sun(collection)
    if ground:
        floor = add_checker_ground(collection, ground_height, size=8.0 * max(scale, 0.125))
        floor[PART_KEY] = "ground"
    return camera


def fly_scale(body: bpy.types.Object) -> float:
    """Body length relative to the paper's 2 cm cartoon fly (camera and floor scale with it)."""
    size = body.get(SIZE_KEY, "cartoon")
    return (
        FlyModel.preset(size).body_size[1] / FlyModel().body_size[1]
        if size in ("cartoon", "fruit_fly")
        else 1.0
    )


def add_checker_ground(
    collection: bpy.types.Collection, height: float, size: float = 8.0, cells: int = 32
) -> bpy.types.Object:
    """A checkered floor below the start, so the follow camera shows how fast the fly climbs."""
    edges = np.linspace(-size / 2, size / 2, cells + 1)
    grid_x, grid_y = np.meshgrid(edges, edges, indexing="ij")
    vertices = np.stack([grid_x.ravel(), grid_y.ravel(), np.full(grid_x.size, height)], axis=1)
    index = np.arange((cells + 1) ** 2).reshape(cells + 1, cells + 1)
    faces = np.stack([index[:-1, :-1], index[1:, :-1], index[1:, 1:], index[:-1, 1:]], axis=-1).reshape(-1, 4)
    mesh = writers.mesh_from_arrays("Fly Ground", vertices, faces)
    for color in ((0.8, 0.8, 0.75, 1.0), (0.25, 0.3, 0.35, 1.0)):
        mesh.materials.append(writers.principled_material("Fly Ground", color, roughness=0.8))
    checker = (np.add.outer(np.arange(cells), np.arange(cells)) % 2).ravel()
    mesh.polygons.foreach_set("material_index", checker.astype(np.int32))
    return writers.new_object("Fly Ground", mesh, collection)


class PROCANIM_OT_load_genome(ProcAnimOperator, ImportHelper, bpy.types.Operator):
    """Load a fly genome (.npz) to bake; the file is checked before it is used"""

    bl_idname = "procanim.load_genome"
    bl_label = "Load Genome"
    bl_options = {"REGISTER", "UNDO"}

    filename_ext = ".npz"
    filter_glob: StringProperty(
        name="Filter", description="Genome files", default="*.npz", options={"HIDDEN"}
    )

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


class PROCANIM_OT_save_genome(ProcAnimOperator, ExportHelper, bpy.types.Operator):
    """Save the current fly genome (trained, loaded or shipped) to a .npz file"""

    bl_idname = "procanim.save_genome"
    bl_label = "Save Genome"
    bl_options = {"REGISTER"}

    filename_ext = ".npz"
    filter_glob: StringProperty(
        name="Filter", description="Genome files", default="*.npz", options={"HIDDEN"}
    )

    def run(self, context: bpy.types.Context) -> set[str]:
        genome = load_genome(genome_file(context.scene.procanim.fly.genome_path))
        target = paths.output_file(self.filepath, "Genome file", ".npz")
        paths.make_parent(target, "Genome file")
        path = save_genome(genome, target)
        self.report({"INFO"}, f"Saved genome to {path}")
        return {"FINISHED"}


classes = (
    PROCANIM_OT_add_fly,
    PROCANIM_OT_train_fly,
    PROCANIM_OT_bake_fly,
    PROCANIM_OT_load_genome,
    PROCANIM_OT_save_genome,
)


# --------------------------------------------------------------------------- headless CLI


def add_cli(subparsers) -> None:
    fly = subparsers.add_parser("fly", help="train a fly controller or bake a fly's flight")
    actions = fly.add_subparsers(dest="fly_command", metavar="ACTION", parser_class=type(fly))
    actions.required = True
    train = actions.add_parser("train", parents=[COMMON], help="evolve a genome; write it and its curve")
    train.add_argument("--population", type=int, default=100, help="flies per generation")
    train.add_argument("--generations", type=int, default=30, help="generations to train")
    train.add_argument(
        "--fitness",
        choices=[i[0].lower() for i in FITNESS_ITEMS],
        default="final_height_minus_drift",
        help="what a good flight is",
    )
    train.add_argument("--flight-time", type=float, default=2.0, help="seconds per training flight")
    train.add_argument("--crossover", type=float, default=0.5, help="gene-from-parent-1 probability")
    train.add_argument("--mutation-rate", type=float, default=0.05, help="per-gene mutation probability")
    train.add_argument("--mutation", choices=("perturb", "reset"), default="perturb", help="mutation kind")
    train.add_argument("--seed", type=int, default=0, help="random seed")
    train.add_argument(
        "--aero",
        choices=("drag", "quasi_steady"),
        help="wing force model (default: drag, quasi_steady for stroke)",
    )
    train.add_argument("--asymmetric", action="store_true", help="control both wings separately")
    train.add_argument(
        "--control",
        choices=("direct", "stroke"),
        default="direct",
        help="direct: the paper's wing angles (cartoon fly); stroke: the wing-beat generator (fruit fly)",
    )
    cluster = train.add_mutually_exclusive_group()
    cluster.add_argument(
        "--workers", type=int, help="score generations on a local Dask cluster of N processes (needs Dask)"
    )
    cluster.add_argument(
        "--scheduler", help="score generations on a Dask scheduler, tcp://HOST:8786 (needs Dask)"
    )
    train.add_argument("--resume", action="store_true", help="continue from the saved population")
    train.add_argument(
        "--checkpoint-threshold",
        type=float,
        help="save the best genome to <genome>_checkpoints/ whenever the best fitness passes "
        "this, raising it by --checkpoint-delta each time",
    )
    train.add_argument("--checkpoint-delta", type=float, default=0.1, help="threshold step (default 0.1)")
    train.add_argument(
        "--genome", type=Path, default=Path("out/fly_trained.npz"), help="genome file to write"
    )
    train.add_argument("--curve", type=Path, help="also copy the training curve PNG here")
    train.add_argument("--bake", type=float, default=0.0, help="then bake this many seconds of its flight")
    train.set_defaults(run=_cli_train)
    bake = actions.add_parser("bake", parents=[COMMON], help="bake a genome's flight onto a fly model")
    bake.add_argument("--genome", type=Path, help="genome .npz (default: the shipped hovering genome)")
    bake.add_argument("--duration", type=float, default=30.0, help="seconds of flight")
    bake.add_argument("--camera", action="store_true", help="add a camera and light that follow the fly")
    bake.add_argument(
        "--chase",
        action="store_true",
        help="add a target bead looping in front of the fly and steer toward it "
        "(uses the shipped steering genome unless --genome is given)",
    )
    bake.set_defaults(run=_cli_bake)


def _cli_train(args, context) -> None:
    genome = args.genome.resolve()
    aero = args.aero or ("quasi_steady" if args.control == "stroke" else "drag")
    if args.workers or args.scheduler:
        _train_on_dask(args, genome, aero)
    else:
        _train_in_process(args, genome, aero)
    if args.bake > 0:
        context.scene.procanim.fly.genome_path = str(genome)
        call_operator("procanim.add_fly")
        call_operator(
            "procanim.bake_fly",
            duration=args.bake,
            genome_path=str(genome),
            follow_camera=args.render is not None,
        )


def _train_on_dask(args, genome: Path, aero: str) -> None:
    """Distributed training runs in the bpy-free core (``python -m addon.fly train``) in a child
    Python, so Blender never imports Dask; the genome it writes is what Load Genome takes."""
    import subprocess
    import sys

    if args.resume or args.checkpoint_threshold is not None:
        raise CliError("fly train: --resume and checkpoints are not available with --workers / --scheduler")
    command = [
        sys.executable,
        "-m",
        "addon.fly",
        "train",
        "--control",
        args.control,
        "--aero",
        aero,
        "--fitness",
        args.fitness,
        "--population",
        str(args.population),
        "--generations",
        str(args.generations),
        "--flight-time",
        str(args.flight_time),
        "--seed",
        str(args.seed),
        "--genome",
        str(genome),
    ]
    command += ["--asymmetric"] if args.asymmetric else []
    command += ["--workers", str(args.workers)] if args.workers else ["--scheduler", args.scheduler]
    result = subprocess.run(command, cwd=Path(__file__).resolve().parent.parent, check=False)
    if result.returncode != 0:
        raise CliError(f"fly train: distributed training failed (exit {result.returncode}); see above")
    print(f"procanim: genome {genome} (trained on Dask)")


def _train_in_process(args, genome: Path, aero: str) -> None:
    call_operator(
        "procanim.train_fly",
        population=args.population,
        generations=args.generations,
        fitness=args.fitness.upper(),
        train_duration=args.flight_time,
        crossover=args.crossover,
        mutation_rate=args.mutation_rate,
        mutation=args.mutation.upper(),
        seed=args.seed,
        aero=aero.upper(),
        asymmetric=args.asymmetric,
        control=args.control.upper(),
        resume=args.resume,
        checkpoints=args.checkpoint_threshold is not None,
        checkpoint_threshold=args.checkpoint_threshold if args.checkpoint_threshold is not None else 0.5,
        checkpoint_delta=args.checkpoint_delta,
        output_path=str(genome),
    )
    curve = genome.with_name(genome.stem + "_curve.png")
    print(f"procanim: genome {genome}, training curve {curve}")
    if args.curve is not None:
        args.curve.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(curve, args.curve)


def _cli_bake(args, context) -> None:
    if args.genome is not None and not args.genome.is_file():
        raise CliError(f"fly bake: genome file {args.genome} does not exist")
    if not (np.isfinite(args.duration) and args.duration > 0):
        raise CliError(f"fly bake: --duration must be a positive number of seconds, got {args.duration}")
    genome_path = str(args.genome.resolve()) if args.genome else ""
    context.scene.procanim.fly.genome_path = genome_path  # Add Fly builds the fly this genome flies
    call_operator("procanim.add_fly")
    model = load_genome(genome_file(genome_path, steering=args.chase)).model()
    target = add_looping_target(context.scene, args.duration, model).name if args.chase else ""
    call_operator(
        "procanim.bake_fly",
        duration=args.duration,
        genome_path=genome_path,
        follow_camera=args.camera or args.render is not None,
        target=target,
    )
    if model.control == "stroke":
        blur_wings(context.scene)


def blur_wings(scene: bpy.types.Scene) -> None:
    """Motion blur on, with enough steps that a wing sweeping a whole beat per shutter smears
    along its arc (Cycles per-object steps, EEVEE's blur steps); Workbench draws no blur."""
    scene.render.use_motion_blur = True
    scene.render.motion_blur_shutter = 0.5
    eevee = getattr(scene, "eevee", None)
    if eevee is not None and hasattr(eevee, "motion_blur_steps"):
        eevee.motion_blur_steps = 8
    for obj in fly_parts(bpy.context).values():
        settings = getattr(obj, "cycles", None)
        if (
            obj.get(PART_KEY) in ("wing_r", "wing_l")
            and settings is not None
            and hasattr(settings, "motion_steps")
        ):
            settings.motion_steps = 6


def add_looping_target(
    scene: bpy.types.Scene, duration: float, model: FlyModel | None = None
) -> bpy.types.Object:
    """A red bead looping in front of the fly, keyed every frame.

    The paper's symmetric cartoon fly gets a figure-eight in its vertical plane (it cannot turn);
    an asymmetric fly a path that also swings sideways, through all three dimensions, scaled to
    the fly's size.
    """
    model = model or FlyModel()
    scale = model.body_size[1] / FlyModel().body_size[1]
    collection = writers.selected_instance(bpy.context, COLLECTION) or scene.collection
    bead = (
        0.008
        * max(scale, 0.25)
        * np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=float)
    )
    faces = [(0, 2, 4), (2, 1, 4), (1, 3, 4), (3, 0, 4), (2, 0, 5), (1, 2, 5), (3, 1, 5), (0, 3, 5)]
    target = writers.new_object("Fly Target", writers.mesh_from_arrays("Fly Target", bead, faces), collection)
    writers.assign_material(target, writers.principled_material("Fly Target", (0.9, 0.1, 0.05, 1.0)))
    fps = scene.render.fps / scene.render.fps_base
    frames = scene.frame_start + np.arange(int(duration * fps) + 2)
    time = (frames - scene.frame_start) / fps
    if model.asymmetric:
        reach = 0.04 if model.size == "fruit_fly" else 0.25
        path = np.stack(
            [
                reach * np.sin(2 * np.pi * time / 6.0),
                reach * 0.8 * np.sin(2 * np.pi * time / 4.0),
                1.0 + reach * 0.5 * np.sin(4 * np.pi * time / 6.0 + 0.5) - reach * 0.5 * np.sin(0.5),
            ],
            axis=1,
        )
    else:
        path = np.stack(
            [
                np.zeros_like(time),
                0.25 * np.sin(2 * np.pi * time / 5.0),
                1.3 + 0.15 * np.sin(4 * np.pi * time / 5.0),
            ],
            axis=1,
        )
    writers.write_object_transforms(target, frames, locations=path)
    return target
