package command

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// Usage lines show either/or flags as alternatives, not as if each were
// required.
func TestUsageShowsEitherOrFlagsAsAlternatives(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{
		"dlq replay":           "Usage: sluice dlq replay (--id=INT-64 | --group=STRING)",
		"replay":               "Usage: sluice replay --group=STRING (--to-earliest | --to-latest | --to-time=TIME | --to-offset=TO-OFFSET)",
		"source rotate-secret": "Usage: sluice source rotate-secret --source=STRING (--secret=STRING | --generate)",
	} {
		var cli CLI
		var out bytes.Buffer
		parser, err := kong.New(&cli, kong.Name("sluice"), kong.Help(eitherOrHelp), kong.Writers(&out, &out), kong.Exit(func(int) {}))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = parser.Parse(append(strings.Fields(cmd), "--help"))
		if !strings.Contains(out.String(), want) {
			t.Errorf("sluice %s --help:\n%s\nwant %q", cmd, out.String(), want)
		}
	}
}
