"""The shared operator base: domain errors become one status-bar report and leave no trace.

``ProcAnimOperator.execute`` wraps a subclass's ``run``. ``BakeOperator`` splits long work into a
generator (``bake``) that yields progress and a ``write`` step, and runs it blocking from scripts
(``execute``) or modal with a progress bar and ESC from the UI (``invoke``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator, Iterable
from typing import Any

import bpy

from ..addon import limits
from ..addon.errors import ProcAnimError
from .preferences import preferences

#: Estimated seconds of work an operator may start when it blocks (a script's call): a minute, unless
#: the preferences' Script Time Limit says otherwise (0: none, for pipeline scripts with long bakes).
#: From the sidebar long work runs modal with progress and Esc, and the CLI is a batch job that
#: Ctrl+C stops, so both may ask for more.
BLOCKING_TIME_LIMIT = limits.TIME_LIMIT
INTERACTIVE_TIME_LIMIT = 4 * 3600.0
_batch_depth = 0


class batch_mode:
    """Within this context (the headless CLI) operators may start long work, as from the sidebar."""

    def __enter__(self) -> None:
        global _batch_depth
        _batch_depth += 1

    def __exit__(self, *exc_info) -> None:
        global _batch_depth
        _batch_depth -= 1

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


# Render settings an operator may change (the render export does); restored on failure.
_RENDER_SETTINGS = ("engine", "resolution_x", "resolution_y", "resolution_percentage", "filepath")

#: Float properties whose declared hard range is wider than this get it as their hard limit: no
#: ProcAnim setting means anything beyond a thousand kilometres, seconds or units, and larger values
#: overflow once squared (3.4e38, the float maximum, is what Blender clamps inf to).
UNBOUNDED_FLOAT_LIMIT = 1e6


class SceneState:
    """The scene settings an operator may change besides datablocks, to put back on failure:
    frame range and current frame, frame rate, camera, world, render output, active object, selection."""

    def __init__(self, context: bpy.types.Context) -> None:
        self.scene = context.scene
        self.view_layer = context.view_layer
        scene = self.scene
        if scene is None:
            return
        self.frames = (scene.frame_start, scene.frame_end, scene.frame_current)
        self.fps = (scene.render.fps, scene.render.fps_base)
        self.camera = scene.camera
        self.world = scene.world
        self.render = {name: getattr(scene.render, name) for name in _RENDER_SETTINGS}
        layer = self.view_layer
        self.active = layer.objects.active if layer is not None else None
        self.selected = [o for o in _live(layer.objects) if o.select_get()] if layer is not None else []

    def restore_frame(self) -> None:
        scene = self.scene
        if scene is not None and scene.frame_current != self.frames[2]:
            scene.frame_set(self.frames[2])

    def restore(self) -> None:
        scene = self.scene
        if scene is None:
            return
        layer = self.view_layer
        if layer is not None:
            layer.update()  # drop the view layer's entries of objects the rollback deleted
        start, end, _ = self.frames
        if (scene.frame_start, scene.frame_end) != (start, end):
            scene.frame_start = min(start, scene.frame_end)
            scene.frame_end = end
            scene.frame_start = start
        if (scene.render.fps, scene.render.fps_base) != self.fps:
            scene.render.fps, scene.render.fps_base = self.fps
        if scene.camera != self.camera:
            scene.camera = _alive(self.camera)
        if scene.world != self.world:
            scene.world = _alive(self.world)
        for name, value in self.render.items():
            if getattr(scene.render, name) != value:
                setattr(scene.render, name, value)
        if layer is not None:
            keep = {o.as_pointer() for o in self.selected if _alive(o) is not None}
            for obj in _live(layer.objects):
                if obj.select_get() != (obj.as_pointer() in keep):
                    obj.select_set(obj.as_pointer() in keep)
            if layer.objects.active != self.active:
                layer.objects.active = _alive(self.active)
        self.restore_frame()


def one_line(error: BaseException) -> str:
    """The status bar shows one short line: control characters from a user's text are shown escaped
    and a message quoting a huge value is cut in the middle."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(error))
    return text if len(text) <= 400 else text[:280] + " ... " + text[-100:]


def _alive(block: bpy.types.ID | None) -> bpy.types.ID | None:
    """``block`` if it still exists (a rollback may have deleted it), else None."""
    try:
        return block if block is not None and block.name is not None else None
    except ReferenceError:
        return None


def _live(objects: Iterable[bpy.types.Object | None]) -> list[bpy.types.Object]:
    return [o for o in objects if o is not None]


def check_numeric_properties(operator: bpy.types.Operator) -> None:
    """Refuse NaN and infinity in any float property, and values beyond ``UNBOUNDED_FLOAT_LIMIT``
    in one declared without a real hard limit, before anything is computed or written."""
    allowed = getattr(operator, "nonfinite_allowed", ())
    for prop in operator.properties.bl_rna.properties:
        if prop.type != "FLOAT" or prop.identifier in allowed:
            continue
        value = getattr(operator, prop.identifier)
        values = list(_flatten(value))
        if not all(math.isfinite(v) for v in values):
            raise ProcAnimError(f"{prop.name} must be a finite number, got {_shown(value)}")
        cap = UNBOUNDED_FLOAT_LIMIT
        if prop.hard_max > cap and any(v > cap for v in values):
            raise ProcAnimError(f"{prop.name} is {_shown(value)}; at most {cap:g}")
        if prop.hard_min < -cap and any(v < -cap for v in values):
            raise ProcAnimError(f"{prop.name} is {_shown(value)}; at least {-cap:g}")


def _flatten(value) -> Iterable[float]:
    if isinstance(value, float | int):
        yield float(value)
        return
    for item in value:
        yield from _flatten(item)


def _shown(value) -> str:
    if isinstance(value, float | int):
        return f"{value:g}"
    return "(" + ", ".join(_shown(v) for v in value) + ")"


class ProcAnimOperator:
    """Mixin for every ProcAnim operator: subclasses implement ``run(context) -> set[str]``.

    A float property listed in the class attribute ``nonfinite_allowed`` may be NaN or infinite.
    """

    def time_limit(self) -> float:
        """Seconds of estimated work this run may start (see ``BLOCKING_TIME_LIMIT``)."""
        if _batch_depth or getattr(self, "_interactive", False):
            return INTERACTIVE_TIME_LIMIT
        limit = getattr(preferences(), "script_time_limit", BLOCKING_TIME_LIMIT)
        return limit if limit > 0 else math.inf

    def execute(self, context: bpy.types.Context) -> set[str]:
        state = SceneState(context)
        snapshot = DataSnapshot()
        try:
            check_numeric_properties(self)
            return self.run(context)
        except ProcAnimError as exc:
            snapshot.rollback()
            state.restore()
            self.report({"ERROR"}, one_line(exc))
            return {"CANCELLED"}
        except BaseException:
            # A bug, not bad input: still leave the scene clean, then let the traceback show.
            snapshot.rollback()
            state.restore()
            raise
        finally:
            state.restore_frame()


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
        limit = self.time_limit()
        start = time.perf_counter()
        while True:
            try:
                step = next(steps)
            except StopIteration as stop:
                return self.write(context, stop.value)
            # Estimates refuse most oversized requests up front; this stops the rest (a stiff impact
            # that needs many more substeps than expected) instead of blocking the script for minutes.
            elapsed = time.perf_counter() - start
            if elapsed > limit:
                steps.close()
                fraction = step[0] if isinstance(step, tuple) else float(step)
                raise limits.TooMuchWorkError(self._overran(elapsed, fraction))

    def _overran(self, elapsed: float, fraction: float) -> str:
        total = ""
        if fraction > 0:
            total = f"; all of it would take about {limits.format_seconds(elapsed / fraction)}"
        return (
            f"{self.bl_label} stopped after {elapsed:.0f} s at {fraction:.0%}{total}. Ask for less work, "
            "or run it from the sidebar (Esc stops it) or the command line"
        )

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
        self._state = SceneState(context)
        self._snapshot = DataSnapshot()
        self._interactive = True
        try:
            check_numeric_properties(self)
            self._steps = self.bake(context)
            self._advance(time.perf_counter() + self._slice_seconds)
        except StopIteration as stop:
            return self._finish(context, stop.value)
        except ProcAnimError as exc:
            return self._fail(context, one_line(exc))
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
            self._rollback()
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
            return self._fail(context, one_line(exc))
        except BaseException:
            self._stop_ui(context)
            self._rollback()
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
            return self._fail(context, one_line(exc))
        except BaseException:
            self._rollback()
            raise
        finally:
            self._state.restore_frame()
        if cancelled:
            self.report({"WARNING"}, f"{self.bl_label} stopped early; kept the best result so far")
        return status

    def _fail(self, context: bpy.types.Context, message: str) -> set[str]:
        self._rollback()
        self.report({"ERROR"}, message)
        return {"CANCELLED"}

    def _rollback(self) -> None:
        self._snapshot.rollback()
        self._state.restore()

    def _stop_ui(self, context: bpy.types.Context) -> None:
        wm = context.window_manager
        if getattr(self, "_timer", None) is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        context.workspace.status_text_set(None)
