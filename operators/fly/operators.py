"""Add Fly, Train Fly and Bake Fly."""

from __future__ import annotations

import bpy
import numpy as np

from ...addon import limits, quaternions
from ...addon.fly import load_genome, save_genome, simulate_genomes_steps
from ...addon.fly.errors import FlyError
from ...addon.fly.fitness import mean_lateral_drift
from ...addon.fly.model import rotate_about_z, wing_quaternions, yaw_quaternion
from ...addon.fly.training import TrainingConfig, TrainingResult, new_population, train_steps
from .. import paths, writers
from .._base import BakeOperator, ProcAnimOperator
from .constants import (
    BAKED_FLIGHT_SECONDS_PER_SECOND,
    MIN_KEY_SPACING,
    SIZE_KEY,
)
from .genomes import (
    checkpoint_folder,
    genome_file,
    population_file,
    resolve_output,
    show_curve,
    write_curve,
)
from .properties import (
    FlyBakeProperties,
    FlyTrainingProperties,
)
from .scene import (
    add_follow_camera,
    build_fly,
    fly_parts,
    sample_target,
)


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
