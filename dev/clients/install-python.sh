#!/usr/bin/env bash
# Installs openapi-python-client VERSION from PyPI into a virtual
# environment at DIR (make clients keeps one per version under
# .run/tools/). A failed install leaves nothing behind.
set -euo pipefail
version=$1 dir=$2
command -v python3 >/dev/null || { echo "clients: python3 is needed (with its venv module) to install openapi-python-client $version" >&2; exit 1; }
rm -rf "$dir"
trap 'rm -rf "$dir"' ERR
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check "openapi-python-client==$version"
"$dir/bin/openapi-python-client" --version >/dev/null
