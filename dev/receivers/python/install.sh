#!/usr/bin/env bash
# Installs the Python receiver's pinned requirements (requirements.txt, from
# PyPI) into a virtual environment at DIR. dev/receivers's test keeps one per
# requirements file under .run/tools/ and runs this when it is missing. The
# environment is built beside DIR and moved into place whole, so a failed or
# interrupted install leaves no DIR behind and the next run tries again.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "receivers: python3 is needed (with its venv module: apt-get install -y python3 python3-venv)" >&2; exit 1; }
tmp=$dir.tmp.$$
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp"
"$tmp/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
mkdir -p "$(dirname "$dir")"
rm -rf "$dir"
mv "$tmp" "$dir"
