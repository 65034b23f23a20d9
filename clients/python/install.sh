#!/usr/bin/env bash
# Installs the Python client from this folder, with its pinned test
# requirements from PyPI, into a virtual environment at DIR (make test keeps
# one per version of the requirements under .run/tools/). A failed install
# leaves nothing behind.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "clients/python: python3 is needed (with its venv module)" >&2; exit 1; }
rm -rf "$dir"
trap 'rm -rf "$dir"' ERR
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements-test.txt"
# Editable: the tests run the folder's code as it is.
"$dir/bin/pip" install --quiet --disable-pip-version-check --no-deps -e "$here"
