"""A `blender`-compatible launcher around the bpy module, so pytest-blender can be exercised here.

Understands the subset of Blender's command line that pytest-blender uses: ``--version``, ``-b`` /
``--background``, ``--factory-startup``, a ``.blend`` to open, ``--addons``, ``--python`` / ``-P``,
``--python-exit-code`` and ``--`` (everything after it is left for the script).
"""

from __future__ import annotations

import os
import runpy
import sys


def main(argv: list[str]) -> int:
    if "--version" in argv or "-v" in argv:
        import bpy

        print(f"Blender {bpy.app.version_string}")
        print(f"\tbuild: bpy module {bpy.app.version_string}")
        return 0
    tail = argv[argv.index("--") :] if "--" in argv else []
    head = argv[: len(argv) - len(tail)]
    scripts: list[str] = []
    blend = None
    exit_code_on_error = 0
    index = 0
    while index < len(head):
        arg = head[index]
        if arg in ("-b", "--background", "--factory-startup", "-noaudio"):
            index += 1
        elif arg in ("-P", "--python"):
            scripts.append(head[index + 1])
            index += 2
        elif arg == "--python-exit-code":
            exit_code_on_error = int(head[index + 1])
            index += 2
        elif arg == "--addons":
            index += 2  # extensions are enabled by the tests' own fixtures
        elif arg.endswith(".blend"):
            blend = arg
            index += 1
        else:
            print(f"blender shim: unsupported argument {arg!r}", file=sys.stderr)
            return 2
    import bpy

    if blend:
        bpy.ops.wm.open_mainfile(filepath=blend)
    sys.argv = ["blender", *argv]
    for script in scripts:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as stop:
            return stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except Exception:
            import traceback

            traceback.print_exc()
            return exit_code_on_error
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
