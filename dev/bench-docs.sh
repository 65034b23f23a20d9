#!/usr/bin/env bash
# `make bench-docs`: copy the table the latest `make bench` wrote
# (.run/bench/results.md) into docs/performance.md, between its markers
# <!-- bench:begin ... --> and <!-- bench:end -->. make bench itself never
# writes a tracked file, so the CI's bench guard leaves the tree clean.
# A quick or partial run (BENCH_QUICK, BENCH_ONLY) is refused unless
# BENCH_DOCS_ANY=1: the manual shows a full run.
set -euo pipefail
cd "$(dirname "$0")/.."
results=.run/bench/results.md
page=docs/performance.md
if [[ ! -s $results ]]; then
  echo "no $results: run make bench first" >&2
  exit 1
fi
if [[ ${BENCH_DOCS_ANY:-} != 1 ]]; then
  if ! grep -q ', full mode' "$results" || ! grep -q '^| null endpoint' "$results" || ! grep -q '^| consumers (credits group)' "$results"; then
    echo "$results is from a quick or partial run; the manual shows a full make bench (BENCH_DOCS_ANY=1 to copy it anyway)" >&2
    exit 1
  fi
fi
grep -q '^<!-- bench:begin' "$page" && grep -q '^<!-- bench:end -->' "$page" || {
  echo "$page has no <!-- bench:begin --> ... <!-- bench:end --> markers" >&2
  exit 1
}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
awk -v results="$results" '
  /^<!-- bench:begin/ {
    print
    blanks = 0
    while ((getline line < results) > 0) {
      if (line == "") { blanks++; continue }
      for (; blanks > 0; blanks--) print ""
      print line
    }
    print ""
    skip = 1
    next
  }
  /^<!-- bench:end -->/ { skip = 0 }
  !skip { print }
' "$page" >"$tmp"
cat "$tmp" >"$page"
echo "copied $results into $page"
