"""The handlers that keep every mirror in step with its focus objects, touching only what changed.

- ``depsgraph_update_post`` reads the depsgraph's list of updated IDs: a mirror is rebuilt only when
  one of its foci (or the mesh a curved plate is cut on) moved or changed, or the mirror itself was
  edited (a dirty set), never after a scan of every
  object. Which objects are foci of which mirror is indexed once and re-indexed only when objects
  are added or removed, or after undo and file loads.
- In the interface, a mirror whose focus is being dragged is rebuilt once the drag pauses
  (``QUIET_SECONDS`` without updates), not on every mouse move: the drag stays fluid.
- ``frame_change_post`` looks only at mirrors with an animated focus (keys, drivers, NLA, constraints
  or an animated parent): during playback everything else costs nothing.
- While a render runs, meshes are edited only when the interface is locked (Render > Lock
  Interface, which the handler turns on for scenes whose mirrors have animated foci) or in a
  background render; otherwise the handlers wait for the render to end.
"""

from __future__ import annotations

import time

import bpy
from bpy.app.handlers import persistent

from .recipes import mirror_objects, refresh_mirror


class _Index:
    """Mirrors of one scene and their foci, by pointer (renames do not matter); rebuilt only when it
    may be out of date: objects added or removed, undo, a file loaded."""

    def __init__(self) -> None:
        self.key: tuple | None = None
        self.mirrors: dict[int, str] = {}
        self.by_focus: dict[int, set[int]] = {}

    def ensure(self, scene: bpy.types.Scene) -> None:
        if (scene.name, len(bpy.data.objects)) != self.key:
            self.rebuild(scene)

    def rebuild(self, scene: bpy.types.Scene) -> None:
        global SCANS
        SCANS += 1
        self.mirrors, self.by_focus = {}, {}
        for obj in mirror_objects(scene):
            self.index_mirror(obj)
        self.key = (scene.name, len(bpy.data.objects))

    def index_mirror(self, obj: bpy.types.Object) -> None:
        pointer = obj.as_pointer()
        self.mirrors[pointer] = obj.name
        for focus_set in self.by_focus.values():
            focus_set.discard(pointer)
        recipe = obj.procanim.mirror
        # A curved plate cut on another object's mesh follows that object too (moved or edited).
        support = recipe.support_object if recipe.support == "MESH" else None
        for watched in (recipe.focus_1, recipe.focus_2, support):
            if watched is not None and watched.as_pointer() != pointer:
                self.by_focus.setdefault(watched.as_pointer(), set()).add(pointer)

    def objects(self, pointers) -> list[bpy.types.Object] | None:
        """The mirror objects, or None when one was renamed or replaced behind the index's back."""
        found = []
        for pointer in pointers:
            obj = bpy.data.objects.get(self.mirrors.get(pointer, ""))
            if obj is None or obj.as_pointer() != pointer:
                return None
            found.append(obj)
        return found

    def invalidate(self) -> None:
        self.key = None


INDEX = _Index()
#: How many times the handlers scanned the scene's objects (for tests and the benchmark).
SCANS = 0
_RENDERING = {"active": False}
#: Seconds without a depsgraph update before the mirrors dragged in the interface are rebuilt.
QUIET_SECONDS = 0.2
_PENDING: dict = {"mirrors": set(), "scene": "", "last_update": 0.0}


def _moves_by_itself(obj: bpy.types.Object | None) -> bool:
    """Whether ``obj`` can move when only the frame changes (keys, drivers, NLA, constraints, parents)."""
    while obj is not None:
        anim = obj.animation_data
        if anim is not None and (anim.action is not None or len(anim.drivers) or len(anim.nla_tracks)):
            return True
        if len(obj.constraints):
            return True
        obj = obj.parent
    return False


def _animated(mirror: bpy.types.Object) -> bool:
    recipe = mirror.procanim.mirror
    return _moves_by_itself(recipe.focus_1) or _moves_by_itself(recipe.focus_2)


def _may_edit_meshes(scene: bpy.types.Scene) -> bool:
    return not _RENDERING["active"] or bpy.app.background or scene.render.use_lock_interface


def _refresh(scene: bpy.types.Scene, pointers) -> None:
    objects = INDEX.objects(pointers)
    if objects is None:  # a mirror was renamed or replaced: index again, then check them all
        INDEX.rebuild(scene)
        objects = INDEX.objects(list(INDEX.mirrors)) or []
    for obj in objects:
        if obj.type == "MESH" and obj.procanim.mirror.mirror_type != "NONE":
            refresh_mirror(obj)


@persistent
def follow_foci(scene: bpy.types.Scene, depsgraph=None) -> None:
    """``depsgraph_update_post``: rebuild the mirrors whose foci moved (by hand, by a driver or by
    animation) or whose recipe was edited, from the depsgraph's updates. Called without a depsgraph
    (from a script), it checks every indexed mirror."""
    if not _may_edit_meshes(scene):
        return
    INDEX.ensure(scene)
    if not INDEX.mirrors:
        return
    if depsgraph is None:
        _refresh(scene, list(INDEX.mirrors))
        return
    dirty: set[int] = set()
    for update in depsgraph.updates:
        original = getattr(update.id, "original", update.id)
        if not isinstance(original, bpy.types.Object):
            continue
        pointer = original.as_pointer()
        if pointer in INDEX.mirrors:
            dirty.add(pointer)  # its recipe or its foci may have changed: index it again
            INDEX.index_mirror(original)
        if pointer in INDEX.by_focus and (update.is_updated_transform or update.is_updated_geometry):
            dirty |= INDEX.by_focus[pointer]
    if not dirty:
        return
    if bpy.app.background:
        _refresh(scene, dirty)
        return
    _PENDING["mirrors"] |= dirty
    _PENDING["scene"] = scene.name
    _PENDING["last_update"] = time.monotonic()
    if not bpy.app.timers.is_registered(rebuild_when_quiet):
        bpy.app.timers.register(rebuild_when_quiet, first_interval=QUIET_SECONDS)


def rebuild_when_quiet() -> float | None:
    """Timer: rebuild the pending mirrors once no update came for ``QUIET_SECONDS`` (a drag paused)."""
    waited = time.monotonic() - _PENDING["last_update"]
    if waited < QUIET_SECONDS:
        return QUIET_SECONDS - waited
    scene = bpy.data.scenes.get(_PENDING["scene"])
    if scene is None or not _PENDING["mirrors"]:
        _PENDING["mirrors"] = set()
        return None
    if not _may_edit_meshes(scene):
        return 0.5  # a render is running: try again after it
    pending, _PENDING["mirrors"] = _PENDING["mirrors"], set()
    INDEX.ensure(scene)
    _refresh(scene, pending)
    return None


@persistent
def follow_animated_foci(scene: bpy.types.Scene, depsgraph=None) -> None:
    """``frame_change_post``: only mirrors with an animated focus can change with the frame."""
    if not _may_edit_meshes(scene):
        return
    INDEX.ensure(scene)
    mirrors = INDEX.objects(list(INDEX.mirrors))
    if mirrors is None:
        INDEX.rebuild(scene)
        mirrors = INDEX.objects(list(INDEX.mirrors)) or []
    animated = [obj for obj in mirrors if _animated(obj)]
    if animated and not scene.render.use_lock_interface and not bpy.app.background:
        # A render of this scene must lock the interface so the mirrors can follow frame by frame.
        scene.render.use_lock_interface = True
    for obj in animated:
        refresh_mirror(obj)


@persistent
def _render_started(scene, *_args) -> None:
    _RENDERING["active"] = True


@persistent
def _render_ended(scene, *_args) -> None:
    _RENDERING["active"] = False


@persistent
def _forget_index(*_args) -> None:
    INDEX.invalidate()


def _handler_lists():
    handlers = bpy.app.handlers
    return (
        (handlers.depsgraph_update_post, follow_foci),
        (handlers.frame_change_post, follow_animated_foci),
        (handlers.render_init, _render_started),
        (handlers.render_complete, _render_ended),
        (handlers.render_cancel, _render_ended),
        (handlers.load_post, _forget_index),
        (handlers.undo_post, _forget_index),
        (handlers.redo_post, _forget_index),
    )


def register() -> None:
    for handlers, function in _handler_lists():
        if function not in handlers:
            handlers.append(function)


def unregister() -> None:
    for handlers, function in _handler_lists():
        while function in handlers:
            handlers.remove(function)
    if bpy.app.timers.is_registered(rebuild_when_quiet):
        bpy.app.timers.unregister(rebuild_when_quiet)
    _PENDING["mirrors"] = set()
    INDEX.invalidate()
