#!/usr/bin/env bash
# `make bench`: build the load generator and run every measurement against the
# local services (make up) and a freshly built bin/sluice (make build).
# BENCH_QUICK=1 gives the same keys from shorter runs.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/sluice-bench ./dev/bench
exec bin/sluice-bench
