// The relay's tests run against the real Postgres and Kafka of
// internal/testenv. Each test has its own database (so its own outbox and
// slot) and its own topic; the crash and failover tests run the relay as a
// real `sluice cdc` process, built once here, and kill it with SIGKILL.
package cdc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sluicehq/sluice/internal/testenv"
)

// sluiceBin is the `sluice` binary the process tests run.
var sluiceBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "sluice-cdc-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sluiceBin = filepath.Join(dir, "sluice")
	build := exec.Command("go", "build", "-o", sluiceBin, "github.com/sluicehq/sluice/cmd/sluice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "cdc tests: build sluice:", err)
		return 1
	}
	if _, err := testenv.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "cdc tests:", err)
		return 1
	}
	return m.Run()
}
