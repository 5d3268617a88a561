"""Redo (F9): a fast Add shows its settings to change and re-run; a long bake's redo panel shows no
settings (so it never re-runs the bake, blocking) and says why."""

from __future__ import annotations

import importlib

import bpy
import pytest
from ui_smoke import smoke_draw_operator

LONG_BAKES = [
    "procanim.bake_softbody",
    "procanim.bake_rigid_pile",
    "procanim.add_rope",
    "procanim.bake_balance",
    "procanim.bake_fly",
    "procanim.train_fly",
    "procanim.bake_ik",
    "procanim.trace_rays",
]


def _class(extension_package, idname):
    classes = importlib.import_module(f"{extension_package}.operators").classes
    return next(cls for cls in classes if cls.bl_idname == idname)


@pytest.mark.parametrize("idname", LONG_BAKES)
def test_long_bakes_keep_the_redo_panel_free_of_settings_and_say_so(extension_package, idname):
    cls = _class(extension_package, idname)
    assert {"REGISTER", "UNDO"} <= cls.bl_options and "INTERNAL" not in cls.bl_options
    record = smoke_draw_operator(cls)
    assert record.properties == [], "no setting in the redo panel: nothing there re-runs the bake"
    assert any("not re-run" in label for label in record.labels)


@pytest.mark.parametrize("idname", ["procanim.juggle", "procanim.add_ik_arm", "procanim.add_fly"])
def test_fast_adds_offer_their_settings_for_a_redo(extension_package, idname):
    cls = _class(extension_package, idname)
    record = smoke_draw_operator(cls) if "draw" in dir(cls) else None
    if record is not None:
        assert len(record.properties) >= 1
    # Without a draw of its own Blender lists every setting; with one it must list them itself.
    rna = getattr(bpy.ops.procanim, idname.split(".")[1]).get_rna_type()
    assert [p for p in rna.properties if p.identifier != "rna_type" and not p.is_hidden]
