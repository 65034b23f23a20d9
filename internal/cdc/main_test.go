// The relay's tests run against the real Postgres and Kafka of
// internal/testenv (they fail, never skip, without them); decode and
// watermark tests need neither. Each integration test has its own database
// (so its own outbox and slot) and its own topic; the crash and failover
// tests run the relay as a real `sluice cdc` process, built once, and kill
// it with SIGKILL.
package cdc

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// sluiceBin builds the `sluice` binary once per test binary and returns it.
func sluiceBin(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "sluice-cdc-test"); buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "sluice"), "github.com/sluicehq/sluice/cmd/sluice").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		tb.Fatalf("build sluice: %v", buildErr)
	}
	return filepath.Join(binDir, "sluice")
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
