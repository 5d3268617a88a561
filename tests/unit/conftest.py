"""Shared set-up of the unit tests: the same BLAS kernels on every x86-64 machine.

OpenBLAS (numpy's BLAS) picks its kernels by the CPU it finds, and they round differently. A 50-cube pour
(test_simulation_heap_pour.py) is chaotic, so that is enough to change a heap: from the same code mu 0.5
seed 1 heaped at 25.88 deg with the Haswell kernels (an AVX2 machine picks them) and at 31.72 with the
SkylakeX ones an AVX-512 machine picks. So on x86-64 with AVX2 the suite runs on the Haswell kernels, and
its figures are the same on every such machine. OpenBLAS reads the setting when numpy loads it, which is
why it is set here, before any test module imports numpy; an OPENBLAS_CORETYPE already set is kept.
"""

import os
import platform
import sys
import warnings


def _cpu_runs_avx2() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            return " avx2" in cpuinfo.read()
    except OSError:
        return False


if platform.machine() in ("x86_64", "AMD64") and _cpu_runs_avx2():
    if "numpy" in sys.modules and "OPENBLAS_CORETYPE" not in os.environ:
        warnings.warn("numpy was loaded before tests/unit/conftest.py: BLAS kernels not pinned", stacklevel=1)
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
