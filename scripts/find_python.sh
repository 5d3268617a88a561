#!/usr/bin/env bash
# Print the path of a Python interpreter of the given minor version (e.g. 3.13), or explain what is
# missing on stderr and exit 1. Looks at $PYTHON<MAJOR><MINOR> (e.g. PYTHON313), pythonX.Y on PATH,
# pyenv's versions, and the usual install prefixes, so a fresh machine needs no configuration.
set -uo pipefail
want=${1:?usage: find_python.sh 3.13}
var="PYTHON${want/./}"
works() { [ -n "$1" ] && "$1" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$want'.split('.'))))" 2>/dev/null; }
candidates=("${!var:-}" "$(command -v "python$want" 2>/dev/null)")
pyenv_root=${PYENV_ROOT:-$HOME/.pyenv}
for found in "$pyenv_root"/versions/"$want"*/bin/python"$want" /usr/bin/python"$want" /usr/local/bin/python"$want" /opt/python*/bin/python"$want"; do
  candidates+=("$found")
done
# pyenv's shim only answers when the version is selected.
if command -v pyenv >/dev/null 2>&1; then
  for version in $(pyenv versions --bare 2>/dev/null | grep -E "^$want(\.|$)"); do
    candidates+=("$pyenv_root/versions/$version/bin/python$want")
  done
fi
python3_path=$(command -v python3 2>/dev/null)
candidates+=("$python3_path")
for candidate in "${candidates[@]}"; do
  if works "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done
cat >&2 <<MSG
ProcAnim needs Python $want (Blender's own Python for some of its supported versions) and found none.
Install it, e.g. 'pyenv install $want' or your system's python$want package, or point $var at it:
  make test $var=/path/to/python$want
MSG
exit 1
