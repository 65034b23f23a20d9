#!/usr/bin/env bash
# Installs axe-core, exactly as package-lock.json pins it, into DIR (make
# test keeps it under .run/tools/): the console's accessibility test
# (command/internal/operator/console, TestEveryPageIsAccessible) injects its
# axe.min.js into each page. A failed install leaves nothing behind.
set -euo pipefail
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v npm >/dev/null || { echo "axe: npm is needed to install axe-core (the console's accessibility test)" >&2; exit 1; }
rm -rf "$dir"
trap 'rm -rf "$dir"' ERR
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --silent)
test -f "$dir/node_modules/axe-core/axe.min.js"
