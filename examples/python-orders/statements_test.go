package pyorders_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The Python consumer reads claimed bodies and writes intents with copies
// of the Go runtime's statements (a team in another language copies them
// from docs/any-language.md): the copies stay the runtime's, comments
// aside.
func TestTheConsumersStatementsAreTheGoRuntimes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"claim.sql", "intents.sql"} {
		python := statement(t, filepath.Join("pyorders", "sql", name))
		runtime := statement(t, filepath.Join("..", "..", "internal", "consumers", "sql", name))
		if python != runtime {
			t.Errorf("pyorders/sql/%s is not the Go runtime's statement:\n%s\nwant\n%s", name, python, runtime)
		}
	}
}

// statement is the SQL of file without its comment lines.
func statement(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
