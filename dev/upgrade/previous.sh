#!/usr/bin/env bash
# Prints the path of the previous release's sluice binary (the commit
# dev/upgrade/PREVIOUS names), building it on first use into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/sluice/releases/<commit>/sluice
# outside the clone, so CI builds it once per release, not once per run.
# The source is that commit's tree (git archive), fetched when the clone
# lacks it (a shallow clone); the build has no VCS stamp.
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.."

commit="$(grep -v '^#' dev/upgrade/PREVIOUS | tr -d '[:space:]')"
[[ "$commit" =~ ^[0-9a-f]{40}$ ]] || { echo "dev/upgrade/PREVIOUS: want one full commit hash, got '$commit'" >&2; exit 1; }
dir="${XDG_CACHE_HOME:-$HOME/.cache}/sluice/releases/$commit"
bin="$dir/sluice"
if [[ -x "$bin" ]]; then
  echo "$bin"
  exit 0
fi

if ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "upgrade: fetching the previous release $commit" >&2
  git fetch --quiet origin "$commit" 2>/dev/null || git fetch --quiet --unshallow origin
fi
src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
git archive "$commit" | tar -x -C "$src"
echo "upgrade: building the previous release $commit once, into $dir (a few minutes on 2 cores)" >&2
mkdir -p "$dir"
(cd "$src" && go build -buildvcs=false -o "$bin.tmp.$$" ./cmd/sluice)
mv -f "$bin.tmp.$$" "$bin"
echo "$bin"
