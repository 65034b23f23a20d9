#!/usr/bin/env bash
# Installs the Python orders consumer's pinned dependencies
# (requirements.txt, from PyPI) into a virtual environment at DIR; make test
# keeps one per version of the requirements under .run/tools/. A failed
# install leaves nothing behind, so the next make tries again.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
command -v python3 >/dev/null || { echo "python-orders: python3 (3.10 or later, with its venv module) is needed to install the example's consumer" >&2; exit 1; }
python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "python-orders: python3 is $(python3 --version 2>&1); 3.10 or later is needed" >&2; exit 1; }
python3 -c 'import venv, ensurepip' 2>/dev/null || { echo "python-orders: python3's venv and ensurepip modules are needed (Debian: apt-get install python3-venv)" >&2; exit 1; }
rm -rf "$dir"
trap 'rm -rf "$dir"' ERR
python3 -m venv "$dir"
"$dir/bin/pip" install --quiet --disable-pip-version-check --no-input -r "$here/requirements.txt"
"$dir/bin/python" -c 'import confluent_kafka, psycopg; print("python-orders: confluent-kafka", confluent_kafka.__version__, "psycopg", psycopg.__version__)'
