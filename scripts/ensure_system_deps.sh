#!/usr/bin/env bash
# Workbench and EEVEE render headless through Mesa's EGL; without it Blender aborts on the first
# OpenGL call. Install it when missing (Debian/Ubuntu, as root), otherwise say what is needed.
set -euo pipefail
if ldconfig -p 2>/dev/null | grep -q "libEGL_mesa.so"; then
  exit 0
fi
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libegl-mesa0 libgl1-mesa-dri >/dev/null
else
  echo "ProcAnim needs Mesa's EGL for headless Workbench/EEVEE renders: install libegl-mesa0 and libgl1-mesa-dri" >&2
  exit 1
fi
