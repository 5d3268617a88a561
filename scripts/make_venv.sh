#!/usr/bin/env bash
# make_venv.sh VENV PYTHON_VERSION REQUIREMENTS: (re)create a test venv for one Blender version with
# the Python that Blender version ships, and install its pinned requirements.
set -euo pipefail
venv=$1 version=$2 requirements=$3
python=$(bash "$(dirname "$0")/find_python.sh" "$version")
echo "== $venv: Python $version ($python), $(grep -m1 '^bpy' "$requirements")"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
touch "$venv/.stamp"
