"""The headless command line: one subcommand per generator, then save and render.

Entered through ``scripts/procanim_cli.py`` (inside a Blender binary or with the bpy module).
Each operator module may define ``add_cli(subparsers)``; its subcommand's ``run(args, context)``
builds the scene, and the options every subcommand shares (``COMMON``) are handled here.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import bpy

from ..addon.errors import ProcAnimError
from ._base import batch_mode


class CliError(Exception):
    """A failed headless run; the message is printed as the one-line reason."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, not argparse's usage block
        raise CliError(f"{self.prog}: {message}")


def _resolution(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT, got {text!r}") from None
    if width < 16 or height < 16:
        raise argparse.ArgumentTypeError(f"resolution {text} is too small (at least 16x16)")
    return width, height


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


COMMON = argparse.ArgumentParser(add_help=False)
_common = COMMON.add_argument_group("output")
_common.add_argument("--out", type=Path, help="save the resulting scene to this .blend file")
_common.add_argument(
    "--render", type=Path, help="render the animation: a .mp4 file, or a folder for PNG frames (--format png)"
)
_common.add_argument(
    "--engine",
    choices=("workbench", "eevee", "cycles"),
    default="eevee",
    help="render engine (default eevee)",
)
_common.add_argument(
    "--format", choices=("mp4", "png"), default="mp4", help="video or PNG frames (default mp4)"
)
_common.add_argument(
    "--resolution", type=_resolution, default=(640, 360), help="render size WIDTHxHEIGHT (default 640x360)"
)
_common.add_argument("--samples", type=_positive_int, default=16, help="samples per pixel (Cycles, EEVEE)")
_common.add_argument(
    "--frames", type=_positive_int, help="render only the first N frames of the scene's range"
)


def build_parser() -> argparse.ArgumentParser:
    from . import MODULES

    parser = _Parser(
        prog="procanim",
        description="ProcAnim headless: build a generator's scene, save it and render it.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="SUBCOMMAND", parser_class=_Parser)
    for module in MODULES:
        add = getattr(module, "add_cli", None)
        if add is not None:
            add(subparsers)
    return parser


def call_operator(idname: str, **properties) -> set[str]:
    """Run ``bpy.ops.<idname>`` blocking; an error report or a cancel raises :class:`CliError`."""
    category, name = idname.split(".")
    operator = getattr(getattr(bpy.ops, category), name)
    try:
        with batch_mode():
            result = operator("EXEC_DEFAULT", **properties)
    except RuntimeError as exc:  # bpy.ops raises on an ERROR report
        message = str(exc).strip().removeprefix("Error: ").strip()
        raise CliError(f"{idname}: {message}") from None
    except TypeError as exc:  # unknown or ill-typed keyword
        raise CliError(f"{idname}: {exc}") from None
    if "CANCELLED" in result:
        raise CliError(f"{idname} was cancelled")
    return result


def main(argv: list[str]) -> int:
    """Parse ``argv``, run the subcommand, save and render; returns the process exit code."""
    from .render import render_animation

    try:
        parser = build_parser()
        if not argv or argv[0] in ("-h", "--help"):
            parser.print_help()
            return 0 if argv else 2
        args = parser.parse_args(argv)
        if args.command is None:
            raise CliError("procanim: choose a subcommand (see --help)")
        bpy.ops.wm.read_homefile(use_empty=True)
        args.run(args, bpy.context)
        scene = bpy.context.scene
        if args.frames is not None:
            scene.frame_end = min(scene.frame_end, scene.frame_start + args.frames - 1)
        if args.out is not None:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            bpy.ops.wm.save_as_mainfile(filepath=str(args.out.resolve()), check_existing=False)
            print(f"procanim: saved {args.out}")
        if args.render is not None:
            path = render_animation(
                scene, args.render.resolve(), args.engine, args.resolution, args.format.upper(), args.samples
            )
            print(f"procanim: rendered frames {scene.frame_start}-{scene.frame_end} to {path}")
    except (CliError, ProcAnimError) as exc:
        print(f"procanim: error: {exc}", file=sys.stderr)
        return 1
    return 0
