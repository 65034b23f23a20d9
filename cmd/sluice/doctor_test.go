package main

import (
	"encoding/json"
	"testing"
)

// doctorLines are what `sluice doctor -o json` printed.
type doctorLines []doctorLine

// doctor runs `sluice doctor -o json` with env and returns its lines and
// exit code.
func doctor(t *testing.T, env []string, args ...string) (doctorLines, int) {
	t.Helper()
	out, errOut, code := cliWith(t, env, append([]string{"doctor", "-o", "json"}, args...)...)
	var found struct {
		Checks doctorLines `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &found); err != nil {
		t.Fatalf("doctor -o json: %v\n%s%s", err, out, errOut)
	}
	return found.Checks, code
}

// find returns the line of the check named name.
func (ls doctorLines) find(name string) (doctorLine, bool) {
	for _, l := range ls {
		if l.Check == name {
			return l, true
		}
	}
	return doctorLine{}, false
}
