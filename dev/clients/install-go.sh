#!/usr/bin/env bash
# Installs oapi-codegen VERSION from the Go module proxy into DIR (make
# clients keeps one per version under .run/tools/). A failed install leaves
# nothing behind, so the next make tries again.
set -euo pipefail
version=$1 dir=$2
rm -rf "$dir"
trap 'rm -rf "$dir"' ERR
mkdir -p "$dir"
GOBIN=$(cd "$dir" && pwd) GOFLAGS= go install "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$version"
"$dir/oapi-codegen" --version >/dev/null
