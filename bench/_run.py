"""Run one benchmark script and leave through ``dev_extension.exit_process``.

``bench/run_all.py`` starts every script through this, so a script that enabled the extension exits
the way Blender 4.2's bpy module survives (it segfaults while Python finalizes otherwise).
"""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import dev_extension  # noqa: E402

if __name__ == "__main__":
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    try:
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    dev_extension.exit_process(code)
