"""ProcAnim headless entry point.

Runs inside a Blender binary:      blender -b -P scripts/procanim_cli.py -- SUBCOMMAND [ARGS]
or with the bpy module:            .venv/bin/python scripts/procanim_cli.py SUBCOMMAND [ARGS]
``--help`` lists the subcommands.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dev_extension  # noqa: E402


def _arguments() -> list[str]:
    if "--" in sys.argv:
        return sys.argv[sys.argv.index("--") + 1 :]
    return sys.argv[1:]


def main() -> int:
    argv = _arguments()
    dev_extension.isolate_user_resources()
    import bpy  # noqa: F401  (after isolating the user config)

    package = dev_extension.enable()
    try:
        cli = importlib.import_module(f"{package}.operators.cli")
        return cli.main(argv)
    finally:
        dev_extension.disable(package)


if __name__ == "__main__":
    dev_extension.exit_process(main())
