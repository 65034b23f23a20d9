#!/usr/bin/env bash
# Installs the TypeScript client's dependencies from npm, exactly as its
# lockfile pins them (openapi-fetch; the generator openapi-typescript and
# tsc for make clients and the tests), into clients/typescript/node_modules,
# and builds it. Run again only when the lockfile changed.
set -euo pipefail
cd "$(dirname "$0")"
stamp=node_modules/.sluice-lock-$(sha256sum package-lock.json | cut -c1-12)
[ -e "$stamp" ] && exit 0
command -v npm >/dev/null || { echo "clients/typescript: npm (Node.js 20 or later) is needed" >&2; exit 1; }
# Scripts wait: prepare builds, which needs the generated sources present.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
touch "$stamp"
