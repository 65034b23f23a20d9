package manual_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo is a go command that answers dev/build.sh as a first build's
// would, without compiling: go list names 300 of 400 packages stale (and
// fails offline when $FAKE_GO_OFFLINE_FAILS is set: modules missing), go
// build names packages as -v does and writes the binary. Every call, and
// the moment the build starts, is appended to $FAKE_GO_LOG, where
// build.sh's own output goes too.
const fakeGo = `#!/usr/bin/env bash
echo "go $*" >> "$FAKE_GO_LOG"
case "$1" in
version) echo "go version go1.26.8 linux/amd64" ;;
env) echo /tmp/gomodcache ;;
list)
  if [[ "${GOPROXY:-}" == off && -n "${FAKE_GO_OFFLINE_FAILS:-}" ]]; then exit 1; fi
  for i in $(seq 300); do echo stale; done
  for i in $(seq 100); do echo; done ;;
build)
  echo "BUILD STARTS" >> "$FAKE_GO_LOG"
  for i in $(seq 5); do echo "example.com/pkg$i" >&2; done
  mkdir -p bin && printf '#!/bin/sh\n' > bin/sluice && chmod +x bin/sluice ;;
esac
`

// buildScript runs dev/build.sh in a checkout of its own with the fake go
// first on PATH, and returns the log: build.sh's output and go's calls, in
// the order they happened.
func buildScript(t *testing.T, dir string, env ...string) string {
	t.Helper()
	log := filepath.Join(dir, "log")
	cmd := exec.Command("bash", filepath.Join(dir, "dev", "build.sh"))
	cmd.Env = append(os.Environ(), append(env, "PATH="+filepath.Join(dir, "fakebin")+":"+os.Getenv("PATH"), "FAKE_GO_LOG="+log)...)
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		b, _ := os.ReadFile(log)
		t.Fatalf("dev/build.sh: %v\n%s", err, b)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// make build never compiles in silence: before a build with packages to
// compile it says how many and about how long, a download of the Go
// modules is said before it starts, and a binary newer than every source,
// built by the same Go and flags, is not counted again (the check that
// counts reads every package).
func TestBuildSaysWhatItCompilesBeforeItStarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "dev"), filepath.Join(dir, "dev")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "fakebin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "fakebin", "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}

	first := buildScript(t, dir, "FAKE_GO_OFFLINE_FAILS=1")
	download := strings.Index(first, "[build] downloading the Go modules")
	compiling := strings.Index(first, "[build] compiling bin/sluice: 300 of its 400 packages")
	starts := strings.Index(first, "BUILD STARTS")
	if download < 0 || compiling < download || starts < compiling || !strings.Contains(first[compiling:starts], " min on ") &&
		!strings.Contains(first[compiling:starts], " s on ") {
		t.Errorf("a first build: want the download said, then what compiles and about how long, then the build:\n%s", first)
	}

	second := buildScript(t, dir)
	if strings.Contains(second, "[build]") || strings.Contains(second, "go list") || !strings.Contains(second, "BUILD STARTS") {
		t.Errorf("a build with nothing new: want go build alone, and nothing said:\n%s", second)
	}
}

// make up writes where make run listens into .run/env, and the URLs that
// reach it: the addresses the environment names (from SLUICE_HTTP_ADDR and
// SLUICE_ADMIN_ADDR given to make up or make run), else those .run/env
// has, else 127.0.0.1:8080 and 127.0.0.1:8082; an address on every
// interface is reached on loopback; the local endpoint policy is written
// once and kept as edited.
func TestMakeUpWritesWhereMakeRunListens(t *testing.T) {
	t.Parallel()
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), "env")
	if err := os.WriteFile(env, []byte("SLUICE_DATABASE_URL=postgres://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(vars ...string) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", `. "$1/dev/up.sh" && write_pipeline_env "$2"`, "_", repo, env)
		cmd.Env = append(withoutSluice(os.Environ()), vars...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("write_pipeline_env: %v\n%s", err, out)
		}
		b, err := os.ReadFile(env)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		vars []string
		want []string
	}{
		{nil, []string{"SLUICE_HTTP_ADDR=127.0.0.1:8080\n", "SLUICE_INGEST_URL=http://127.0.0.1:8080\n", "SLUICE_ADMIN_URL=http://127.0.0.1:8082\n",
			"SLUICE_DELIVERY_ALLOW_HTTP=true\n", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8,::1/128\n", "SLUICE_DATABASE_URL=postgres://x\n"}},
		{[]string{"SLUICE_HTTP_ADDR=:18080", "SLUICE_ADMIN_ADDR=0.0.0.0:18082"}, []string{"SLUICE_HTTP_ADDR=:18080\n",
			"SLUICE_INGEST_URL=http://127.0.0.1:18080\n", "SLUICE_ADMIN_ADDR=0.0.0.0:18082\n", "SLUICE_ADMIN_URL=http://127.0.0.1:18082\n"}},
		{nil, []string{"SLUICE_INGEST_URL=http://127.0.0.1:18080\n", "SLUICE_ADMIN_URL=http://127.0.0.1:18082\n"}}, // kept
	} {
		got := write(c.vars...)
		for _, w := range c.want {
			if strings.Count(got, w) != 1 {
				t.Errorf("with %v, .run/env holds:\n%s\nwant one line %q", c.vars, got, w)
			}
		}
	}
	edited := strings.Replace(write(), "SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_HTTP=false", 1)
	if err := os.WriteFile(env, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := write(); !strings.Contains(got, "SLUICE_DELIVERY_ALLOW_HTTP=false\n") || strings.Contains(got, "ALLOW_HTTP=true") {
		t.Errorf("an edited policy was not kept:\n%s", got)
	}
}
