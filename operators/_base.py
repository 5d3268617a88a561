"""The shared operator base: domain errors become one status-bar report and leave no trace.

``ProcAnimOperator.execute`` wraps a subclass's ``run``. ``BakeOperator`` splits long work into a
generator (``bake``) that yields progress and a ``write`` step, and runs it blocking from scripts
(``execute``) or modal with a progress bar and ESC from the UI (``invoke``).
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import bpy

from ..addon.errors import ProcAnimError

# ID collections a generator may add to; everything new in them is removed on failure.
_TRACKED_DATA = (
    "objects",
    "meshes",
    "armatures",
    "curves",
    "actions",
    "materials",
    "collections",
    "cameras",
    "lights",
    "images",
    "node_groups",
    "textures",
    "worlds",
    "texts",
)


class DataSnapshot:
    """Which datablocks existed before an operator ran, so a failure can delete what it added."""

    def __init__(self) -> None:
        self.before = {name: {i.as_pointer() for i in getattr(bpy.data, name)} for name in _TRACKED_DATA}

    def added(self) -> list[bpy.types.ID]:
        new: list[bpy.types.ID] = []
        for name, before in self.before.items():
            new.extend(i for i in getattr(bpy.data, name) if i.as_pointer() not in before)
        return new

    def rollback(self) -> None:
        new = self.added()
        if new:
            bpy.data.batch_remove(new)


class ProcAnimOperator:
    """Mixin for every ProcAnim operator: subclasses implement ``run(context) -> set[str]``."""

    def execute(self, context: bpy.types.Context) -> set[str]:
        scene = context.scene
        frame = scene.frame_current if scene else None
        snapshot = DataSnapshot()
        try:
            return self.run(context)
        except ProcAnimError as exc:
            snapshot.rollback()
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        except BaseException:
            # A bug, not bad input: still leave the scene clean, then let the traceback show.
            snapshot.rollback()
            raise
        finally:
            if scene is not None and frame is not None and scene.frame_current != frame:
                scene.frame_set(frame)


ProgressStep = float | tuple[float, str]


class BakeOperator(ProcAnimOperator):
    """Mixin for long work: subclasses implement ``bake`` and ``write`` instead of ``run``.

    ``bake(context)`` is a generator: it reads what it needs from ``context`` before its first
    ``yield``, then computes in chunks, yielding progress (a fraction, or ``(fraction, message)``),
    and returns the result. ``write(context, result)`` turns the result into Blender data.
    Override ``cancel_result`` to keep partial work when the user presses ESC.
    """

    #: Seconds of computation per UI timer tick, so the interface stays responsive.
    _slice_seconds = 0.08
    #: Whether the redo panel (F9, Adjust Last Operation) may re-run this with new values. Long bakes
    #: say no: a redo runs ``execute``, blocking the interface for the whole bake on every change.
    redo_reruns = False

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        if not self.redo_reruns:
            layout.label(text=f"{self.bl_label} is not re-run from here (it can take long)", icon="INFO")
            layout.label(text="Change its settings in the sidebar and run it again")
            return
        layout.use_property_split = True
        for prop in self.bl_rna.properties:
            if prop.identifier != "rna_type" and not prop.is_hidden:
                layout.prop(self, prop.identifier)

    def run(self, context: bpy.types.Context) -> set[str]:
        steps = self.bake(context)
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return self.write(context, stop.value)

    def bake(self, context: bpy.types.Context) -> Generator[ProgressStep, None, Any]:
        raise TypeError(f"{type(self).__name__} must implement bake()")

    def write(self, context: bpy.types.Context, result: Any) -> set[str]:
        raise TypeError(f"{type(self).__name__} must implement write()")

    def cancel_result(self) -> Any:
        """The result to write when the user cancels, or None to discard the work."""
        return None

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if bpy.app.background or context.window is None:
            return self.execute(context)
        self._frame = context.scene.frame_current
        self._snapshot = DataSnapshot()
        try:
            self._steps = self.bake(context)
            self._advance(time.perf_counter() + self._slice_seconds)
        except StopIteration as stop:
            return self._finish(context, stop.value)
        except ProcAnimError as exc:
            return self._fail(context, str(exc))
        wm = context.window_manager
        self._timer = wm.event_timer_add(0.02, window=context.window)
        wm.progress_begin(0, 1000)
        wm.modal_handler_add(self)
        return {"RUNNING_MODAL"}

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> set[str]:
        if event.type == "ESC":
            self._steps.close()
            result = self.cancel_result()
            self._stop_ui(context)
            if result is not None:
                return self._finish(context, result, cancelled=True)
            self._snapshot.rollback()
            self._restore_frame(context)
            self.report({"WARNING"}, f"{self.bl_label} cancelled")
            return {"CANCELLED"}
        if event.type != "TIMER" or event.timer is not getattr(self, "_timer", None):
            return {"PASS_THROUGH"}
        try:
            fraction, message = self._advance(time.perf_counter() + self._slice_seconds)
        except StopIteration as stop:
            self._stop_ui(context)
            return self._finish(context, stop.value)
        except ProcAnimError as exc:
            self._stop_ui(context)
            return self._fail(context, str(exc))
        except BaseException:
            self._stop_ui(context)
            self._snapshot.rollback()
            self._restore_frame(context)
            raise
        context.window_manager.progress_update(int(1000 * min(max(fraction, 0.0), 1.0)))
        text = f"{self.bl_label}: {fraction:.0%}" + (f", {message}" if message else "") + " (Esc to stop)"
        context.workspace.status_text_set(text)
        return {"RUNNING_MODAL"}

    def _advance(self, deadline: float) -> tuple[float, str]:
        fraction, message = 0.0, ""
        while True:
            step = next(self._steps)
            fraction, message = step if isinstance(step, tuple) else (float(step), "")
            if time.perf_counter() >= deadline:
                return fraction, message

    def _finish(self, context: bpy.types.Context, result: Any, cancelled: bool = False) -> set[str]:
        try:
            status = self.write(context, result)
        except ProcAnimError as exc:
            return self._fail(context, str(exc))
        except BaseException:
            self._snapshot.rollback()
            raise
        finally:
            self._restore_frame(context)
        if cancelled:
            self.report({"WARNING"}, f"{self.bl_label} stopped early; kept the best result so far")
        return status

    def _fail(self, context: bpy.types.Context, message: str) -> set[str]:
        self._snapshot.rollback()
        self._restore_frame(context)
        self.report({"ERROR"}, message)
        return {"CANCELLED"}

    def _restore_frame(self, context: bpy.types.Context) -> None:
        if context.scene.frame_current != self._frame:
            context.scene.frame_set(self._frame)

    def _stop_ui(self, context: bpy.types.Context) -> None:
        wm = context.window_manager
        if getattr(self, "_timer", None) is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.workspace.status_text_set(None)
