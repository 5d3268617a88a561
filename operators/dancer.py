"""The balancing ballet dancer in Blender: add a skinned dancer, simulate and bake its balance.

The armature keeps the body it was built for (height, mass, sex) as custom properties, so a bake
simulates exactly that body. Bones and simulated bodies share names; a bone's pose rotation is its
body's rotation relative to the parent body, turned into the bone's own rest frame.
"""

from __future__ import annotations

from pathlib import Path

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty

from ..addon.dancer import (
    POSITIONS,
    STEPS,
    Balance,
    DancerError,
    Gains,
    Performance,
    build_body,
    mujoco_unavailable,
    parse_sequence_text,
    perform_steps,
    plan,
    settle_time,
    simulate_balance,
    simulate_balance_steps,
)
from ..addon.dancer.rig import body_mesh, pose_basis, skeleton
from ..addon.plotting import line_plot_png
from . import rig as rig_targets
from . import writers
from ._base import BakeOperator, ProcAnimOperator
from .cli import COMMON, CliError, call_operator

COLLECTION = "Dancer"
DANCER_KEY = "procanim_dancer"
HELPER_KEY = "procanim_dancer_helper"
PLOT_IMAGE = "ProcAnim Dancer Balance"
SAMPLE_DT = 0.01
POLYGON_RING = 16

SEX_ITEMS = (
    ("FEMALE", "Female", "Plagenhoef's female segment masses (a ballerina)"),
    ("MALE", "Male", "Winter's (Dempster's) male segment masses"),
)
# The numbers are the values saved in .blend files (first, second and fifth came first).
POSITION_ITEMS = (
    ("FIRST_POSITION", "First", "Heels together, feet turned out; the sequence continues from here", 0),
    ("SECOND_POSITION", "Second",
     "Feet turned out, a little more than hip width apart; weight shift and retire follow, not releve", 1),
    ("THIRD_POSITION", "Third",
     "Feet turned out, the front heel at the middle of the back foot; the sequence continues from here", 3),
    ("FOURTH_POSITION", "Fourth",
     "Feet turned out, the front foot a foot's length ahead of the back one; the weight shift goes "
     "onto the back (left) foot here", 4),
    ("FIFTH_POSITION", "Fifth",
     "Feet crossed, front heel at the back toes; the sequence continues from here", 2),
)
EXPERIMENT_ITEMS = (
    ("SEQUENCE", "Ballet Sequence",
     "Position, weight shift, retire and releve on one toe (the paper's Fig. 2)"),
    ("BALANCE", "Balance Test",
     "From the heel to the middle of the feet with one strategy (the paper's Fig. 4)"),
)
STRATEGY_ITEMS = (
    ("COP", "Centre of Pressure", "Place the COP to push the COM (eqs. 7-9): fast and steady"),
    ("COM", "Centre of Mass", "Turn the ankles by the COM error (eq. 6): the classic, slower way"),
)
_GAINS = Gains()


class DancerBodyProperties:
    """The body the dancer is built with (shared by the sidebar and the add operator)."""

    height: FloatProperty(
        name="Height", description="Body height in metres; segment lengths scale with it",
        default=1.65, min=1.1, max=2.3, unit="LENGTH",
    )
    mass: FloatProperty(
        name="Mass", description="Body mass in kilograms, split over the segments by the table",
        default=55.0, min=25.0, max=150.0,
    )
    sex: EnumProperty(name="Sex", description="Which anthropometric table to use", items=SEX_ITEMS,
                      default="FEMALE")


class DancerBakeProperties:
    """What to simulate and the controller gains (shared by the sidebar and the bake operator)."""

    experiment: EnumProperty(name="Experiment", description="What the dancer does", items=EXPERIMENT_ITEMS,
                             default="SEQUENCE")
    target_rig: StringProperty(
        name="Rig",
        description="Your character's armature (Rigify, Mixamo, Unreal or any rig with a bone map) to dance "
        "on: a dancer of its height is simulated and retargeted onto it. Empty: the active dancer, or the "
        "active armature when it is not a dancer",
        default="")
    position: EnumProperty(name="Position", description="Ballet position the dancer starts in",
                           items=POSITION_ITEMS, default="FIRST_POSITION")
    sequence: StringProperty(
        name="Sequence",
        description="Steps to dance, comma separated: a position first, then steps with an optional "
        ":left or :right (the working leg; for weight_shift the leg taking the weight) and @seconds, "
        "e.g. 'first_position,weight_shift,retire@4,releve'. Empty: the position and the ticked steps",
        default="")
    weight_shift: BoolProperty(name="Weight Shift", default=True,
                               description="Shift the weight onto the left (supporting) foot")
    retire: BoolProperty(name="Retire", default=True,
                         description="Lift the right foot to the left knee (needs the weight shift)")
    releve: BoolProperty(name="Releve", default=True,
                         description="Rise onto the left toe and hold still (needs the retire)")
    allow_unbalanced: BoolProperty(
        name="Unbalanced Steps", default=False,
        description="Experimental: also simulate the steps the balance controller cannot hold yet (releve "
        "on both feet outside first position, changes out of second, from fifth into second, into "
        "fourth, steps from fourth position but the plies); the dancer falls in them and the bake shows "
        "the fall")
    position_time: FloatProperty(name="Position Time", description="Seconds standing in the position",
                                 default=1.5, min=0.2, max=30.0, unit="TIME_ABSOLUTE")
    shift_time: FloatProperty(name="Shift Time", description="Seconds for the weight shift",
                              default=3.0, min=1.0, max=30.0, unit="TIME_ABSOLUTE")
    retire_time: FloatProperty(name="Retire Time", description="Seconds for lifting the working leg",
                               default=3.5, min=1.0, max=30.0, unit="TIME_ABSOLUTE")
    releve_time: FloatProperty(name="Releve Time", description="Seconds for the rise and the hold on the toe",
                               default=7.0, min=2.5, max=30.0, unit="TIME_ABSOLUTE")
    strategy: EnumProperty(name="Strategy", description="Balance strategy of the balance test",
                           items=STRATEGY_ITEMS, default="COP")
    balance_duration: FloatProperty(name="Test Duration", description="Seconds of the balance test",
                                    default=10.0, min=0.5, max=60.0, unit="TIME_ABSOLUTE")
    cop_com_position: FloatProperty(
        name="COP: COM Gain", description="Eq. 7: how far the desired COP leads the COM error (no unit)",
        default=_GAINS.cop_com_position, min=0.0, soft_max=10.0)
    cop_com_velocity: FloatProperty(
        name="COP: Velocity Gain", description="Eq. 7: desired COP lead per COM velocity (seconds)",
        default=_GAINS.cop_com_velocity, min=0.0, soft_max=5.0)
    cop_tracking: FloatProperty(
        name="COP: Tracking", description="Eq. 9: how fast the ankles bring the COP to its target (1/s)",
        default=_GAINS.cop_tracking, min=0.0, soft_max=50.0)
    com_position: FloatProperty(
        name="COM: Position Gain", description="Eq. 6: ankle turn rate per COM error (1/s)",
        default=_GAINS.com_position, min=0.0, soft_max=10.0)
    com_velocity: FloatProperty(
        name="COM: Velocity Gain", description="Eq. 6: ankle turn per COM velocity (no unit)",
        default=_GAINS.com_velocity, min=0.0, soft_max=10.0)
    hip_com: FloatProperty(
        name="Hip COM Gain", description="Eq. 6 at the supporting hip once the support polygon is small "
        "(on the toe): upper-body lean rate per COM error (1/s); 0 turns it off",
        default=_GAINS.hip_com, min=0.0, soft_max=5.0)
    one_foot_tracking: FloatProperty(
        name="COP: One-Foot Tracking", description="Eq. 9 while one foot carries the weight: how fast "
        "the supporting ankle and hip bring the COP to its target (1/s); the polygon is smaller there",
        default=_GAINS.one_foot_tracking, min=0.0, soft_max=50.0)


# Plain functions, not methods: a PropertyGroup with extra methods crashes Blender 4.2 at exit.
def gains_of(props) -> Gains:
    """The controller gains set on the sidebar settings or the bake operator."""
    return Gains(com_position=props.com_position, com_velocity=props.com_velocity,
                 cop_com_position=props.cop_com_position, cop_com_velocity=props.cop_com_velocity,
                 cop_tracking=props.cop_tracking, hip_com=props.hip_com,
                 one_foot_tracking=props.one_foot_tracking)


def sequence_of(props) -> list[tuple[str, float | None]]:
    """The typed or listed sequence (with per-step seconds), else the position and the ticked steps."""
    if props.sequence.strip():
        return parse_sequence_text(props.sequence)
    steps = [props.position.lower()]
    for flag, step in ((props.weight_shift, "weight_shift"), (props.retire, "retire"),
                       (props.releve, "releve")):
        if not flag:
            break
        steps.append(step)
    return [(step, None) for step in steps]


STEP_ITEMS = tuple((name.upper(), name.replace("_", " ").title(), f"Ballet step '{name}'")
                   for name in POSITIONS + STEPS)
SIDE_ITEMS = (
    ("DEFAULT", "Default", "The paper's choice: the left leg supports, the right one works"),
    ("LEFT", "Left", "The left leg works (for Weight Shift: the left foot takes the weight)"),
    ("RIGHT", "Right", "The right leg works (for Weight Shift: the right foot takes the weight)"),
)


def step_text(step: str, side: str, duration: float) -> str:
    """One step list item as sequence text: ``name[:left|:right][@seconds]``."""
    text = step.lower()
    if side != "DEFAULT" and text not in POSITIONS:
        text += ":" + side.lower()
    if duration > 0.0:
        text += f"@{duration:g}"
    return text


def step_list_text(items) -> str:
    """The sidebar's step list as the bake operator's sequence text."""
    return ",".join(step_text(item.step, item.side, item.duration) for item in items)


def durations_of(props) -> dict[str, float]:
    return {"position": props.position_time, "weight_shift": props.shift_time,
            "retire": props.retire_time, "releve": props.releve_time}


def dancer_parameters(obj: bpy.types.Object) -> dict:
    """The body a dancer armature was built for."""
    return {"height": float(obj[DANCER_KEY + "_height"]), "mass": float(obj[DANCER_KEY + "_mass"]),
            "sex": str(obj[DANCER_KEY + "_sex"])}


def is_dancer(obj: bpy.types.Object | None) -> bool:
    return obj is not None and obj.type == "ARMATURE" and DANCER_KEY in obj


def build_dancer(context: bpy.types.Context, height: float, mass: float, sex: str) -> bpy.types.Object:
    """Armature, skinned body mesh and material for a dancer of this body."""
    body = build_body(height, mass, sex)
    bones = skeleton(body)
    collection = writers.new_instance(context, COLLECTION)
    armature = writers.armature_from_bones(
        context, "Dancer",
        [writers.BoneSpec(b.name, b.head, b.tail, b.parent, connected=False) for b in bones], collection)
    armature[DANCER_KEY] = True
    armature[DANCER_KEY + "_height"] = float(height)
    armature[DANCER_KEY + "_mass"] = float(mass)
    armature[DANCER_KEY + "_sex"] = sex
    armature.data.display_type = "STICK"
    armature.show_in_front = True
    vertices, faces, groups = body_mesh(bones)
    mesh = writers.mesh_from_arrays("Dancer Body", vertices, faces)
    for polygon in mesh.polygons:
        polygon.use_smooth = True
    skin = writers.new_object("Dancer Body", mesh, collection)
    for name, indices in groups.items():
        group = skin.vertex_groups.new(name=name)
        group.add(indices.tolist(), 1.0, "REPLACE")
    modifier = skin.modifiers.new("Armature", "ARMATURE")
    modifier.object = armature
    skin.parent = armature
    writers.assign_material(skin, writers.principled_material("Dancer Skin", (0.85, 0.62, 0.55, 1.0),
                                                              roughness=0.6))
    return armature


def dancer_unavailable(cls) -> bool:
    """Fail a poll with the reason when MuJoCo cannot load here (a platform or Python with no wheel)."""
    reason = mujoco_unavailable()
    if reason is not None:
        cls.poll_message_set(f"The dancer is unavailable: {reason}")
    return reason is not None


class PROCANIM_OT_add_dancer(DancerBodyProperties, ProcAnimOperator, bpy.types.Operator):
    """Add a ballet dancer: a humanoid armature with standard bone names and a skinned body"""

    bl_idname = "procanim.add_dancer"
    bl_label = "Add Dancer"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        return not dancer_unavailable(cls)

    def run(self, context: bpy.types.Context) -> set[str]:
        sex = self.sex.lower()
        build_body(self.height, self.mass, sex)  # validates before anything is created
        stage = writers.stage_for(context)
        armature = build_dancer(context, self.height, self.mass, sex)
        add_stage(context.scene, armature, self.height, stage)
        writers.place_instance(writers.instance_of(armature), context.scene.cursor.location)
        writers.select_only(context, [armature], armature)
        self.report({"INFO"}, f"Added a {self.height:.2f} m, {self.mass:.0f} kg dancer; bake its balance")
        return {"FINISHED"}


class PROCANIM_OT_bake_balance(DancerBakeProperties, BakeOperator, bpy.types.Operator):
    """Simulate the active dancer's balance (MuJoCo) and bake bones, COM, COP and support polygon"""

    bl_idname = "procanim.bake_balance"
    bl_label = "Bake Balance"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if dancer_unavailable(cls):
            return False
        active = context.active_object
        if active is None or active.type != "ARMATURE":
            cls.poll_message_set("Select a dancer (Add Dancer makes one) or your character's armature")
            return False
        return True

    def bake(self, context: bpy.types.Context):
        armature = context.active_object
        scene = context.scene
        # Your own character: the target rig, or the active armature when it is not a dancer.
        target = self.target_rig.strip() or (None if is_dancer(armature) else armature.name)
        self._rig = None
        if target:
            self._rig = rig_targets.read_dancer_rig(rig_targets.armature_by_name(target), scene)
            if self.experiment == "BALANCE":
                raise DancerError("dancing on your own rig needs the Ballet Sequence experiment")
            body = rig_targets.dancer_body(self._rig)
            armature = self._rig.obj
        else:
            body = dancer_parameters(armature)
        self._body = body
        self._setup = (armature.name, scene.render.fps / scene.render.fps_base, scene.frame_start)
        gains = gains_of(self)
        if self.experiment == "BALANCE":
            result = yield from simulate_balance_steps(self.strategy.lower(), self.balance_duration,
                                                       gains=gains, **body)
        else:
            sequence = sequence_of(self)
            durations = None if self.sequence.strip() else durations_of(self)
            self._sequence_text = ",".join(
                name if seconds is None else f"{name}@{seconds:g}" for name, seconds in sequence)
            result = yield from perform_steps(sequence, gains=gains, durations=durations,
                                              allow_unbalanced=self.allow_unbalanced, **body)
        return result

    def write(self, context: bpy.types.Context, result: Balance | Performance) -> set[str]:
        name, fps, frame_start = self._setup
        armature = bpy.data.objects[name]
        if getattr(self, "_rig", None) is not None:
            return self._write_rig(context, result)
        if isinstance(result, Performance):
            # The dancer remembers what it last danced (saved with the .blend).
            armature[DANCER_KEY + "_sequence"] = self._sequence_text
        scene = context.scene
        times = result.times
        frame_count = int(np.floor(times[-1] * fps + 1e-9)) + 1
        frames = frame_start + np.arange(frame_count)
        samples = np.minimum(np.round(np.arange(frame_count) / fps / SAMPLE_DT).astype(int), len(times) - 1)
        bake_bones(armature, result.rotations, result.root_positions, frames, samples)
        polygons = result.support_polygons if isinstance(result, Performance) else None
        bake_helpers(armature, frames, result.com[samples], result.cop[samples],
                     None if polygons is None else [polygons[i] for i in samples])
        writers.set_frame_range(scene, int(frames[0]), int(frames[-1]))
        show_plot(write_plot(plot_path(), result))
        self.report(*summary(result))
        return {"FINISHED"}


    def _write_rig(self, context: bpy.types.Context, result: Performance) -> set[str]:
        _, fps, frame_start = self._setup
        times = result.times
        frame_count = int(np.floor(times[-1] * fps + 1e-9)) + 1
        frames = frame_start + np.arange(frame_count)
        samples = np.minimum(np.round(np.arange(frame_count) / fps / SAMPLE_DT).astype(int), len(times) - 1)
        rig_targets.retarget_dancer(self._rig, result, build_body(**self._body), frames, samples)
        writers.set_frame_range(context.scene, int(frames[0]), int(frames[-1]))
        show_plot(write_plot(plot_path(), result))
        level, message = summary(result)
        self.report(level, f"{self._rig.obj.name}: {message}")
        return {"FINISHED"}


def bake_bones(armature: bpy.types.Object, rotations: dict[str, np.ndarray], root_positions: np.ndarray,
               frames: np.ndarray, samples: np.ndarray) -> None:
    """Key every simulated bone's rotation and the hips' location (bulk keys)."""
    bones = armature.data.bones
    for name, quaternions in rotations.items():
        bone = bones.get(name)
        if bone is None:
            continue
        rest = np.array(bone.matrix_local.to_3x3())
        basis = pose_basis(quaternions[samples], rest)
        writers.write_pose_quaternions(armature, name, frames, basis)
    hips = bones["hips"]
    rest = np.array(hips.matrix_local.to_3x3())
    offsets = (root_positions[samples] - np.array(hips.head_local)) @ rest
    writers.write_pose_locations(armature, "hips", frames, offsets)


def _ring(polygon: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """A support polygon as exactly POLYGON_RING points (repeats fill the rest; empty: a point)."""
    if len(polygon) == 0:
        return np.repeat(fallback[None, :2], POLYGON_RING, axis=0)
    if len(polygon) > POLYGON_RING:
        polygon = polygon[np.linspace(0, len(polygon) - 1, POLYGON_RING).astype(int)]
    pad = np.repeat(polygon[-1:], POLYGON_RING - len(polygon), axis=0)
    return np.vstack([polygon, pad])


def bake_helpers(armature: bpy.types.Object, frames: np.ndarray, com: np.ndarray, cop: np.ndarray,
                 polygons: list[np.ndarray] | None) -> None:
    """COM and COP empties and the support polygon outline on the floor, keyed per frame."""
    collection = armature.users_collection[0]
    old = [obj for obj in collection.objects if obj.get(HELPER_KEY) == armature.name]
    if old:
        # Their data and actions too: a re-bake must not leave an orphan action per helper.
        data = [obj.data for obj in old if obj.data is not None]
        data += [obj.animation_data.action for obj in old if obj.animation_data and obj.animation_data.action]
        data += [
            obj.data.animation_data.action
            for obj in old
            if obj.data is not None and obj.data.animation_data and obj.data.animation_data.action
        ]
        bpy.data.batch_remove(old)
        # A mesh's action loses its last user only once the mesh is gone: remove in passes.
        while orphans := [d for d in data if d.users == 0]:
            data = [d for d in data if d.users != 0]
            bpy.data.batch_remove(orphans)
    helpers = []
    markers = (("Dancer COM", 0.06, "SPHERE", com), ("Dancer COP", 0.05, "CONE", cop))
    for label, size, display, path in markers:
        empty = writers.new_object(label, None, collection)
        empty.empty_display_type = display
        empty.empty_display_size = size
        writers.write_object_transforms(empty, frames, locations=path)
        helpers.append(empty)
    projection = writers.new_object("Dancer COM Floor", None, collection)
    projection.empty_display_type = "CIRCLE"
    projection.empty_display_size = 0.03
    writers.write_object_transforms(projection, frames, locations=com * np.array([1.0, 1.0, 0.0]))
    helpers.append(projection)
    if polygons is not None:
        rings = np.stack([_ring(p, c) for p, c in zip(polygons, cop, strict=True)])
        ring_edges = np.stack([np.arange(POLYGON_RING), np.roll(np.arange(POLYGON_RING), -1)], axis=1)
        lift = 0.002
        first = np.hstack([rings[0], np.full((POLYGON_RING, 1), lift)])
        mesh = writers.mesh_from_arrays("Dancer Support Polygon", first, edges=ring_edges)
        outline = writers.new_object("Dancer Support Polygon", mesh, collection)
        for i in range(POLYGON_RING):
            # Mesh vertex coordinates are animatable: one F-curve per coordinate plays back as is.
            writers.write_channels(mesh, f"vertices[{i}].co", frames,
                                   np.column_stack([rings[:, i], np.full(len(frames), lift)]),
                                   group="Support Polygon")
        helpers.append(outline)
    for obj in helpers:
        obj[HELPER_KEY] = armature.name
        obj.parent = armature


def plot_path() -> Path:
    """Next to the saved .blend, else in Blender's temporary folder."""
    if bpy.data.filepath:
        return Path(bpy.path.abspath("//dancer_balance.png"))
    return Path(bpy.app.tempdir or "/tmp") / "procanim_dancer_balance.png"


def write_plot(path: Path, result: Balance | Performance) -> Path:
    """The COM and COP projections over time (the paper's Fig. 4 and Fig. 5c)."""
    t = result.times
    series = [(t, result.com[:, 0], "COM anterior", (0, 114, 178)),
              (t, result.cop[:, 0], "COP anterior", (213, 94, 0)),
              (t, result.com[:, 1], "COM medial", (0, 158, 115)),
              (t, result.cop[:, 1], "COP medial", (204, 121, 167))]
    title = ("Balance test, " + result.strategy.upper() + " strategy") if isinstance(result, Balance) \
        else f"Ballet sequence ({len(result.sequence)} steps): COM and COP"
    path.parent.mkdir(parents=True, exist_ok=True)
    line_plot_png(path, series, title=title, xlabel="time (s)", ylabel="position (m)")
    return path


def write_comparison_plot(path: Path, runs: dict[str, Balance]) -> Path:
    """Fig. 4: COM and COP on the anterior axis for both strategies, from the heel to the middle."""
    colors = {"com": ((0, 114, 178), (86, 180, 233)), "cop": ((213, 94, 0), (230, 159, 0))}
    series = []
    for strategy, run in runs.items():
        dark, light = colors[strategy]
        series.append((run.times, run.com[:, 0], f"COM ({strategy.upper()} strategy)", dark))
        series.append((run.times, run.cop[:, 0], f"COP ({strategy.upper()} strategy)", light))
    path.parent.mkdir(parents=True, exist_ok=True)
    line_plot_png(path, series, title="COM vs COP strategy (anterior axis)", xlabel="time (s)",
                  ylabel="position (m)")
    return path


def show_plot(path: Path) -> bpy.types.Image:
    return writers.show_image(path, PLOT_IMAGE)


def summary(result: Balance | Performance) -> tuple[set[str], str]:
    if isinstance(result, Balance):
        if result.fell:
            return {"WARNING"}, f"The dancer fell after {result.fall_time:.2f} s; try other gains"
        settle = "never settled" if not np.isfinite(result.settle_time) else \
            f"settled in {result.settle_time:.2f} s"
        return {"INFO"}, (f"{result.strategy.upper()} strategy {settle}; COP amplitude "
                          f"{100 * result.cop_amplitude:.1f} cm")
    if result.fell:
        return {"WARNING"}, f"The dancer fell after {result.fall_time:.2f} s; the bake shows the fall"
    last_start = result.phase_times[-1][1]
    tail = result.times >= last_start
    settle = settle_time(result.times[tail], result.com[tail], result.com_targets[-1])
    text = "still moving at the end"
    if np.isfinite(settle):
        text = f"settled {settle - last_start:.2f} s into it"
    return {"INFO"}, f"Danced {', '.join(result.sequence)} ({result.times[-1]:.1f} s); last step {text}"


def _step_list(context: bpy.types.Context):
    return context.scene.procanim.dancer


class PROCANIM_OT_dancer_step_add(ProcAnimOperator, bpy.types.Operator):
    """Add a step to the dancer's step list, after the selected one"""

    bl_idname = "procanim.dancer_step_add"
    bl_label = "Add Step"
    bl_options = {"REGISTER", "UNDO"}

    step: EnumProperty(name="Step", description="The step to add", items=STEP_ITEMS, default="WEIGHT_SHIFT")
    side: EnumProperty(name="Working Leg", description="Which leg works in the step", items=SIDE_ITEMS,
                       default="DEFAULT")

    def run(self, context: bpy.types.Context) -> set[str]:
        settings = _step_list(context)
        item = settings.steps.add()
        item.step, item.side = self.step, self.side
        position = min(settings.step_index + 1, len(settings.steps) - 1) if len(settings.steps) > 1 else 0
        settings.steps.move(len(settings.steps) - 1, position)
        settings.step_index = position
        return {"FINISHED"}


class _SelectedStep:
    """Operators on the step selected in the dancer's step list: greyed out without one."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        settings = getattr(getattr(context.scene, "procanim", None), "dancer", None)
        if settings is None or not 0 <= settings.step_index < len(settings.steps):
            cls.poll_message_set("Select a step in the list")
            return False
        return True


class PROCANIM_OT_dancer_step_remove(_SelectedStep, ProcAnimOperator, bpy.types.Operator):
    """Remove the selected step from the dancer's step list"""

    bl_idname = "procanim.dancer_step_remove"
    bl_label = "Remove Step"
    bl_options = {"REGISTER", "UNDO"}

    def run(self, context: bpy.types.Context) -> set[str]:
        settings = _step_list(context)
        settings.steps.remove(settings.step_index)
        settings.step_index = min(settings.step_index, len(settings.steps) - 1)
        return {"FINISHED"}


class PROCANIM_OT_dancer_step_move(_SelectedStep, ProcAnimOperator, bpy.types.Operator):
    """Move the selected step up or down in the dancer's step list"""

    bl_idname = "procanim.dancer_step_move"
    bl_label = "Move Step"
    bl_options = {"REGISTER", "UNDO"}

    direction: EnumProperty(name="Direction", description="Where the step goes",
                            items=(("UP", "Up", "One place earlier"), ("DOWN", "Down", "One place later")))

    def run(self, context: bpy.types.Context) -> set[str]:
        settings = _step_list(context)
        new = settings.step_index + (-1 if self.direction == "UP" else 1)
        if 0 <= new < len(settings.steps):
            settings.steps.move(settings.step_index, new)
            settings.step_index = new
        return {"FINISHED"}


classes = (PROCANIM_OT_add_dancer, PROCANIM_OT_bake_balance, PROCANIM_OT_dancer_step_add,
           PROCANIM_OT_dancer_step_remove, PROCANIM_OT_dancer_step_move)


# --------------------------------------------------------------------------- headless CLI


def add_cli(subparsers) -> None:
    p = subparsers.add_parser("dance", parents=[COMMON],
                              help="add a ballet dancer, simulate its balance and bake it")
    p.add_argument("--height", type=float, default=1.65, help="body height in metres")
    p.add_argument("--mass", type=float, default=55.0, help="body mass in kilograms")
    p.add_argument("--sex", choices=("female", "male"), default="female", help="anthropometric table")
    p.add_argument("--sequence", default="first_position,weight_shift,retire,releve",
                   help="comma-separated: a position, then steps (name[:left|:right][@seconds]); "
                   "names: " + ", ".join(POSITIONS + STEPS))
    p.add_argument("--allow-unbalanced", action="store_true",
                   help="also simulate steps the controller cannot hold yet (the dancer falls in them)")
    p.add_argument("--experiment", choices=("sequence", "balance"), default="sequence",
                   help="the ballet sequence, or the heel-to-middle balance test")
    p.add_argument("--strategy", choices=("cop", "com"), default="cop", help="balance test strategy")
    p.add_argument("--duration", type=float, default=10.0, help="balance test seconds")
    p.add_argument("--plot", type=Path, help="write the COM/COP plot of the bake as PNG here")
    p.add_argument("--compare", type=Path,
                   help="also run the balance test with both strategies and plot them (Fig. 4) here")
    p.add_argument("--fps", type=int, help="scene frame rate to bake at (fewer frames render faster)")
    p.add_argument("--camera", action="store_true", help="add a camera, a sun and a floor for rendering")
    p.add_argument("--rig", help="dance on your own armature instead of a new dancer: FILE.blend:OBJECT "
                   "(a dancer of its height is simulated)")
    p.set_defaults(run=_cli_dance)


def _cli_dance(args, context) -> None:
    if args.experiment == "sequence":
        try:
            # Checked before anything is added: an illegal step names itself and why.
            plan(parse_sequence_text(args.sequence), height=args.height,
                 allow_unbalanced=args.allow_unbalanced)
        except DancerError as exc:
            raise CliError(f"dance: {exc}") from None
    if args.fps is not None:
        if not 1 <= args.fps <= 240:
            raise CliError(f"dance: --fps must be between 1 and 240, got {args.fps}")
        context.scene.render.fps, context.scene.render.fps_base = args.fps, 1.0
    rig = None
    if args.rig:
        if args.experiment != "sequence":
            raise CliError("dance: --rig needs the ballet sequence (--experiment sequence)")
        names = rig_targets.load_cli_rigs(args.rig)
        if len(names) != 1:
            raise CliError(f"dance: --rig takes one armature, got {len(names)}")
        rig = bpy.data.objects[names[0]]
        writers.select_only(context, [rig], rig)
    else:
        call_operator("procanim.add_dancer", height=args.height, mass=args.mass, sex=args.sex.upper())
    call_operator("procanim.bake_balance", experiment=args.experiment.upper(), sequence=args.sequence,
                  allow_unbalanced=args.allow_unbalanced,
                  strategy=args.strategy.upper(), balance_duration=args.duration,
                  target_rig=rig.name if rig is not None else "")
    image = bpy.data.images.get(PLOT_IMAGE)
    if args.plot is not None and image is not None:
        args.plot.parent.mkdir(parents=True, exist_ok=True)
        args.plot.write_bytes(Path(bpy.path.abspath(image.filepath)).read_bytes())
        print(f"procanim: wrote {args.plot}")
    if args.compare is not None:
        try:
            runs = {s: simulate_balance(s, args.duration, height=args.height, mass=args.mass, sex=args.sex)
                    for s in ("cop", "com")}
        except DancerError as exc:
            raise CliError(f"dance: {exc}") from None
        write_comparison_plot(args.compare, runs)
        print(f"procanim: wrote {args.compare} (COP settles {runs['cop'].settle_time:.2f} s, "
              f"COM {runs['com'].settle_time:.2f} s)")
    if args.camera:
        armature = rig or next(obj for obj in context.scene.objects if is_dancer(obj))
        scene = context.scene
        has_floor = any(obj.name.startswith("Dancer Floor") for obj in scene.objects)
        has_light = any(obj.type == "LIGHT" for obj in scene.objects)
        full = writers.Stage(camera=scene.camera is None, light=not has_light, floor=not has_floor,
                             frame_range=False)
        height = args.height if rig is None else rig_targets.read_dancer_rig(rig, scene).measure.height
        add_stage(context.scene, armature, height, full)


def add_stage(
    scene: bpy.types.Scene, armature: bpy.types.Object, height: float, stage: writers.Stage
) -> None:
    """Camera, sun and floor for rendering the dancer, as far as ``stage`` allows, in its instance."""
    collection = writers.instance_of(armature) or armature.users_collection[0]
    if stage.camera:
        writers.add_camera_framing(scene, collection, (-0.25, -0.25, 0.0), (0.35, 0.45, 1.1 * height),
                                   direction=(1.0, -0.7, 0.25), lens=50.0)
    if stage.light:
        writers.add_sun(collection)
    if stage.floor:
        floor = writers.mesh_from_arrays("Dancer Floor", [(-2, -2, 0), (2, -2, 0), (2, 2, 0), (-2, 2, 0)],
                                         [(0, 1, 2, 3)])
        writers.assign_material(writers.new_object("Dancer Floor", floor, collection),
                                writers.principled_material("Dancer Floor", (0.35, 0.3, 0.25, 1.0)))
