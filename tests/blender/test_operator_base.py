"""The shared operator base: domain errors are reported once and leave the scene as it was."""

from __future__ import annotations

import bpy
import pytest
from conftest import data_counts


@pytest.fixture()
def probe_operators(ext):
    base = ext("operators._base")
    writers = ext("operators.writers")
    errors = ext("addon.errors")

    class PROCANIM_OT_test_probe(base.ProcAnimOperator, bpy.types.Operator):
        """Creates data, moves the frame, then fails when asked to"""

        bl_idname = "procanim.test_probe"
        bl_label = "Probe"
        bl_options = {"REGISTER", "UNDO"}
        fail: bpy.props.BoolProperty(name="Fail", description="Raise a domain error after writing")

        def run(self, context):
            collection = writers.generator_collection(context.scene, "Probe")
            mesh = writers.mesh_from_arrays("Probe", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
            obj = writers.new_object("Probe", mesh, collection)
            writers.assign_material(obj, writers.principled_material("ProbeMat"))
            context.scene.frame_set(42)
            if self.fail:
                raise errors.ProcAnimError("the probe failed on purpose")
            return {"FINISHED"}

    class PROCANIM_OT_test_bake(base.BakeOperator, bpy.types.Operator):
        """Bakes in steps"""

        bl_idname = "procanim.test_bake"
        bl_label = "Probe Bake"
        bl_options = {"REGISTER", "UNDO"}
        steps: bpy.props.IntProperty(name="Steps", description="How many chunks", default=5)
        fail_at: bpy.props.IntProperty(name="Fail at", description="Chunk that raises, -1 none", default=-1)

        def bake(self, context):
            total = 0
            for step in range(self.steps):
                if step == self.fail_at:
                    raise errors.ProcAnimError(f"diverged at step {step}")
                total += step
                yield (step + 1) / self.steps
            return total

        def write(self, context, result):
            writers.new_object(f"Baked{result}", None, writers.generator_collection(context.scene, "Bake"))
            return {"FINISHED"}

    classes = (PROCANIM_OT_test_probe, PROCANIM_OT_test_bake)
    for cls in classes:
        bpy.utils.register_class(cls)
    yield
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)


def test_success_keeps_the_data_and_restores_the_frame(probe_operators):
    bpy.context.scene.frame_set(7)
    assert bpy.ops.procanim.test_probe() == {"FINISHED"}
    assert bpy.data.objects.get("Probe") is not None
    assert bpy.context.scene.frame_current == 7


def test_domain_error_reports_once_and_leaves_nothing_behind(probe_operators):
    bpy.context.scene.frame_set(3)
    before = data_counts()
    with pytest.raises(RuntimeError, match="the probe failed on purpose"):
        bpy.ops.procanim.test_probe(fail=True)
    assert data_counts() == before
    assert bpy.context.scene.frame_current == 3


def test_blocking_bake_runs_every_step_then_writes(probe_operators):
    assert bpy.ops.procanim.test_bake(steps=5) == {"FINISHED"}
    assert bpy.data.objects.get("Baked10") is not None


def test_failing_bake_writes_nothing(probe_operators):
    before = data_counts()
    with pytest.raises(RuntimeError, match="diverged at step 2"):
        bpy.ops.procanim.test_bake(steps=5, fail_at=2)
    assert data_counts() == before


def test_invoke_in_background_runs_blocking(probe_operators):
    # Buttons call invoke; without a UI (background) the bake must still complete.
    assert bpy.ops.procanim.test_bake("INVOKE_DEFAULT", steps=3) == {"FINISHED"}
    assert bpy.data.objects.get("Baked3") is not None
