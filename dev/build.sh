#!/usr/bin/env bash
# `make build`: bin/sluice. A build with much to compile (the first one,
# or after a change of Go or of the dependencies) says so before it
# starts, with how long it should take, and says how far it got every 15 s,
# so it is never taken for a hang; the Go modules a first build downloads
# are announced too (their time is the network's). It compiles at a lower
# priority: make run starts the services beside it, and their start (a
# JVM's) must not wait behind the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[build] %s\n' "$*" >&2; }

pkg=./cmd/sluice
out=bin/sluice

# CPU time one package of bin/sluice takes to compile, in hundredths of a
# second: a cold build's user+sys time (go build -tags nomsgpack with an
# empty GOCACHE) over the packages it compiled, on the development machine.
cpu_per_package=32

# Nothing newer than the binary, built by this Go with these flags (the
# stamp): the build below compiles nothing, so skip counting (go list
# reads every package).
stamp=.run/build/sluice.stamp
want="$(go version) GOFLAGS=${GOFLAGS:-}"
newer() {
  find . -path ./.run -prune -o -type f -newer "$out" \
    \( -name '*.go' -o -name go.mod -o -name go.sum -o -path './schemas/*' -o -path './migrations/*' \
       -o -path './command/internal/operator/console/*' \) -print -quit
}
stale=0
if [[ ! -x "$out" || "$(cat "$stamp" 2>/dev/null)" != "$want" || -n "$(newer)" ]]; then
  list=(go list -deps -f '{{if .Stale}}stale{{end}}' "$pkg")
  # Offline first: a module missing from the cache fails it, and is then
  # fetched, said first (the time is the network's).
  if ! counts=$(GOPROXY=off "${list[@]}" 2>/dev/null | sort | uniq -c); then
    say "downloading the Go modules bin/sluice needs into $(go env GOMODCACHE) (once)"
    counts=$("${list[@]}" | sort | uniq -c)
  fi
  stale=$(awk '$2 == "stale" {print $1}' <<<"$counts")
  total=$(awk '{n += $1} END {print n}' <<<"$counts")
  stale=${stale:-0}
fi

# The main package is always stale (it is never installed); anything more
# is compiled, then linked (about 5 s).
if (( stale > 1 )); then
  cores=$(nproc)
  seconds=$(( stale * cpu_per_package / 100 / cores + 5 ))
  took="about $seconds s"
  if (( seconds >= 90 )); then
    took="about $(( (seconds + 30) / 60 )) min"
  fi
  say "compiling bin/sluice: $stale of its $total packages are not in Go's build cache; $took on $cores cores (longer while other work shares them)"
  start=$SECONDS
  last=$SECONDS
  n=0
  # go build -v names each package as it compiles it; anything else it
  # prints (a compile error) is shown as it is.
  nice -n 10 go build -v -o "$out" "$pkg" 2>&1 | while IFS= read -r line; do
    if [[ "$line" =~ ^[[:alnum:]_./~-]+$ ]]; then
      n=$((n + 1))
      if (( SECONDS - last >= 15 )); then
        say "  $n of $stale compiled ($(( SECONDS - start )) s)"
        last=$SECONDS
      fi
    else
      printf '%s\n' "$line" >&2
    fi
  done
  say "bin/sluice built in $(( SECONDS - start )) s"
else
  nice -n 10 go build -o "$out" "$pkg"
fi
mkdir -p "$(dirname "$stamp")"
printf '%s\n' "$want" >"$stamp"
