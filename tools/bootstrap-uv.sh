#!/usr/bin/env bash
# Install the pinned uv into DIR/bin/uv from the package index, hash-checked against LOCK.
# Needs only a Python 3 with pip or venv: no uv, no root, nothing outside DIR is written.
# Usage: tools/bootstrap-uv.sh PYTHON DIR LOCK
set -euo pipefail
python=${1:?python}
dir=${2:?target directory}
lock=${3:?hash lock of uv}

rm -rf "$dir"
pip=("$python" -m pip)
if ! "$python" -m pip --version >/dev/null 2>&1; then
  # A Python without pip of its own (e.g. a distribution's python3): venv brings pip via ensurepip.
  "$python" -m venv "$dir/bootstrap"
  pip=("$dir/bootstrap/bin/python" -m pip)
fi
# --target writes only into DIR and is allowed in externally managed (PEP 668) Pythons.
"${pip[@]}" install --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --root-user-action=ignore --require-hashes --target "$dir" -r "$lock"
"$dir/bin/uv" --version
