#!/usr/bin/env bash
# Installs squawk VERSION (the Postgres migration linter, from PyPI's
# squawk-cli, whose wheel carries the binary) into a virtual environment at
# DIR (make test keeps one per version under .run/tools/). A failed install
# leaves nothing behind, so the next make tries again.
set -euo pipefail
version=$1 dir=$2
command -v python3 >/dev/null || { echo "squawk: python3 is needed (with its venv module) to install squawk $version" >&2; exit 1; }
rm -rf "$dir"
trap 'rm -rf "$dir"' ERR
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "squawk-cli==$version"
"$dir/bin/squawk" --version
