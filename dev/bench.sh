#!/usr/bin/env bash
# `make bench`: build the load generator and run every measurement against the
# local services (make up) and a freshly built bin/sluice (make build).
# BENCH_QUICK=1 gives the same keys from shorter runs.
set -euo pipefail
cd "$(dirname "$0")/.."
go build -o bin/sluice-bench ./dev/bench
# The river step's comparator, a module of its own (Sluice's go.mod never
# carries River): built only when the step runs.
case ",${BENCH_ONLY:-river}," in
*,river,*) (cd dev/bench/river && go build -o ../../../bin/sluice-bench-river .) ;;
esac
exec bin/sluice-bench
