package house_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// One judgement, one place: what decides a fault or a default lives in one
// package, and the others ask it.

// kafkaCodes is franz-go's package of Kafka's error codes.
const kafkaCodes = "github.com/twmb/franz-go/pkg/kerr"

// A Kafka error is judged by behaviour once, in internal/kafka (Classify,
// as pg.Classify judges Postgres's): no other production package reads
// Kafka's codes. Tests and dev/ may (they make the errors they judge).
func TestOnlyTheKafkaPackageReadsKafkasCodes(t *testing.T) {
	t.Parallel()
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		p := inModule(fields[0])
		if folderOf(p) == "internal/kafka" || folderOf(p) == "dev" {
			continue
		}
		if slices.Contains(fields[1:], kafkaCodes) {
			t.Errorf("%s imports %s: judge Kafka's errors with kafka.Classify", p, kafkaCodes)
		}
	}
}

// shippedKinds is the registry of the provider kinds Sluice ships.
const shippedKinds = "internal/provider/kinds"

// The provider registry is chosen once per process, by what assembles it
// (the command line and its pipeline), and handed to every store and
// stage: none below the command line picks the shipped kinds as a default
// of its own (test and dev helpers may).
func TestOnlyTheCommandLineChoosesTheProviderKinds(t *testing.T) {
	t.Parallel()
	for _, p := range packages(t) {
		if folders[folderOf(p.ImportPath)] >= cli || helper(p.ImportPath) || strings.HasPrefix(p.ImportPath, shippedKinds) {
			continue
		}
		if slices.Contains(p.Imports, shippedKinds) {
			t.Errorf("%s imports %s: take the process's registry (a *provider.Registry) instead of choosing one", p.ImportPath, shippedKinds)
		}
	}
}
