"""Render one still from each `make demo` scene and tile them into docs/showcase.png (the README image).

Run after `make demo`: .venv/bin/python scripts/showcase.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import dev_extension  # noqa: E402

# (demo scene, fraction of its frame range to show)
TILES = (
    ("juggling", 0.5),
    ("ik", 0.4),
    ("mirrors", 0.95),
    ("dancer", 0.8),
    ("jelly", 0.45),
    ("fly", 0.6),
)
TILE_SIZE = (480, 270)


def render_tile(blend: Path, fraction: float, out: Path) -> np.ndarray:
    import bpy

    render_module = sys.modules[f"{PACKAGE}.operators.render"]
    bpy.ops.wm.open_mainfile(filepath=str(blend))
    scene = bpy.context.scene
    scene.frame_set(round(scene.frame_start + fraction * (scene.frame_end - scene.frame_start)))
    engine = "CYCLES" if blend.stem == "mirrors" else "EEVEE"
    render_module.configure_render(scene, out.parent, engine, TILE_SIZE, "PNG", samples=16)
    scene.render.filepath = str(out)
    bpy.ops.render.render(write_still=True)
    image = bpy.data.images.load(str(out))
    pixels = np.array(image.pixels[:], dtype=np.float32).reshape(TILE_SIZE[1], TILE_SIZE[0], 4)[::-1, :, :3]
    return (np.clip(pixels, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)


def main() -> None:
    global PACKAGE
    dev_extension.isolate_user_resources()
    import importlib

    import bpy  # noqa: F401

    PACKAGE = dev_extension.enable()
    try:
        importlib.import_module(f"{PACKAGE}.operators.render")
        plotting = importlib.import_module(f"{PACKAGE}.addon.plotting")
        out = ROOT / "out"
        tiles = [
            render_tile(out / f"{name}.blend", fraction, out / f"tile_{name}.png") for name, fraction in TILES
        ]
        rows = [np.concatenate(tiles[i : i + 3], axis=1) for i in range(0, len(tiles), 3)]
        (ROOT / "docs").mkdir(exist_ok=True)
        (ROOT / "docs" / "showcase.png").write_bytes(plotting.encode_png(np.concatenate(rows, axis=0)))
        print("wrote docs/showcase.png")
    finally:
        dev_extension.disable(PACKAGE)


PACKAGE = ""

if __name__ == "__main__":
    main()
