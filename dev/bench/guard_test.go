package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A guard entry is a factor of a baseline or a bound of its own: the fresh
// step's spread and inbox scans have no baseline to grow from.
func TestGuardFailsPastABoundOrAFactorOfTheBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "guard.json")
	if err := os.WriteFile(path, []byte(`{
		"ratio": {"baseline": 1.0, "max_factor": 2},
		"fresh_inbox_seq_scans_per_event_max": {"max": 0.01}
	}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		results map[string]float64
		fails   string
	}{
		{"within both", map[string]float64{"ratio": 1.9, "fresh_inbox_seq_scans_per_event_max": 0.0001}, ""},
		{"past the factor", map[string]float64{"ratio": 2.1, "fresh_inbox_seq_scans_per_event_max": 0}, "ratio = 2.10"},
		{"past the bound", map[string]float64{"ratio": 1, "fresh_inbox_seq_scans_per_event_max": 1}, "over its bound 0.01"},
		{"not measured", map[string]float64{"ratio": 1}, "fresh_inbox_seq_scans_per_event_max: not measured"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := (&bench{results: c.results}).guard(path)
			switch {
			case c.fails == "" && err != nil:
				t.Fatalf("guard failed: %v", err)
			case c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)):
				t.Fatalf("guard answered %v, want a failure saying %q", err, c.fails)
			}
		})
	}
}
