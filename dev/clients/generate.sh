#!/usr/bin/env bash
# Generates the admin API's clients from its document.
#
#   generate.sh DOCUMENT DOCUMENT_3_0 OUT
#
# DOCUMENT is `sluice docs openapi` (3.1), DOCUMENT_3_0 its 3.0 rendering
# (`--openapi-version 3.0`, for oapi-codegen, which reads no other). The
# clients are written under OUT as they sit in the repository: OUT is the
# repository for make clients, a temporary folder for the test that fails
# when a checked-in client differs (command/internal/cli's
# TestCheckedInClientsAreWhatTheDocumentGenerates). The generators come from
# the environment, at the versions the Makefile pins: OAPI_CODEGEN,
# OPENAPI_PYTHON_CLIENT, OPENAPI_TYPESCRIPT.
set -euo pipefail
doc=$(realpath "$1") doc30=$(realpath "$2") out=$(realpath "$3")
here=$(cd "$(dirname "$0")" && pwd)
: "${OAPI_CODEGEN:?the oapi-codegen binary (make clients installs it)}"
: "${OPENAPI_PYTHON_CLIENT:?the openapi-python-client binary (make clients installs it)}"
: "${OPENAPI_TYPESCRIPT:?the openapi-typescript binary (clients/typescript/install.sh installs it)}"

mkdir -p "$out/clients" "$out/adminclient" "$out/clients/typescript/src" "$out/clients/python/src/sluice_admin"
cp "$doc" "$out/clients/openapi.json"

# Go: the types and a client (adminclient/admin.gen.go).
"$OAPI_CODEGEN" -config "$here/oapi-codegen.yaml" -o "$out/adminclient/admin.gen.go" "$doc30"

# TypeScript: the paths and schemas as types, which openapi-fetch reads.
# --default-non-nullable=false: a request field with a default (an
# endpoint's kind) is optional to send; by default the generator makes it
# required in every type, request bodies included.
"$OPENAPI_TYPESCRIPT" "$doc" -o "$out/clients/typescript/src/schema.gen.ts" --silent --default-non-nullable=false

# Python: a package of functions and attrs models.
py=$out/clients/python/src/sluice_admin/generated
rm -rf "$py"
("$OPENAPI_PYTHON_CLIENT" generate --path "$doc" --config "$here/openapi-python-client.yaml" \
	--meta none --output-path "$py" --overwrite >/dev/null)

# Each language's table of creates and its iterator per list operation.
python3 "$here/ops.py" "$doc" "$out"
gofmt -w "$out/adminclient/ops.gen.go"
