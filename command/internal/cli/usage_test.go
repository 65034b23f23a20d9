package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// help is what sluice args prints (args end with --help or --help-all).
func help(t *testing.T, args ...string) string {
	t.Helper()
	var cli CLI
	var out bytes.Buffer
	parser, err := kong.New(&cli, kong.Name("sluice"), kong.Help(groupedHelp), kong.Writers(&out, &out), kong.Exit(func(int) {}))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = parser.Parse(args)
	return out.String()
}

// Usage lines show either/or flags as alternatives, not as if each were
// required.
func TestUsageShowsEitherOrFlagsAsAlternatives(t *testing.T) {
	t.Parallel()
	for cmd, want := range map[string]string{
		"replay":               "Usage: sluice replay --group=STRING (--to-earliest | --to-latest | --to-time=TIME | --to-offset=TO-OFFSET)",
		"source rotate-secret": "Usage: sluice source rotate-secret --source=STRING (--secret=STRING | --generate)",
	} {
		if out := help(t, append(strings.Fields(cmd), "--help")...); !strings.Contains(out, want) {
			t.Errorf("sluice %s --help:\n%s\nwant %q", cmd, out, want)
		}
	}
}

// A command's --help shows its own flags, its either/or flags under a
// heading saying to give one, and the deployment-wide flags only behind
// --help-all, after its own under their heading (as kubectl keeps its
// global options apart).
func TestHelpShowsACommandsOwnFlagsFirst(t *testing.T) {
	t.Parallel()
	out := help(t, "replay", "--help")
	for _, want := range []string{"--execute", "One of these (required):\n  --to-earliest", "sluice replay --help-all"} {
		if !strings.Contains(out, want) {
			t.Errorf("sluice replay --help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "--database-url") || strings.Contains(out, "--kafka-sasl-user") {
		t.Errorf("sluice replay --help shows deployment-wide flags:\n%s", out)
	}
	if n := strings.Count(out, "\n"); n > 30 {
		t.Errorf("sluice replay --help is %d lines", n)
	}
	all := help(t, "replay", "--help-all")
	own, heading, wide := strings.Index(all, "--execute"), strings.Index(all, "Deployment-wide flags:\n"), strings.Index(all, "--kafka-sasl-user")
	if own < 0 || heading < own || wide < heading {
		t.Errorf("sluice replay --help-all: want its own flags, then the deployment-wide ones under their heading:\n%s", all)
	}
	top := help(t, "--help")
	for _, want := range []string{"Run the pipeline:\n  serve", "Administer:\n  tenant", "Operate:", "sluice --help-all"} {
		if !strings.Contains(top, want) {
			t.Errorf("sluice --help lacks %q:\n%s", want, top)
		}
	}
	if n := strings.Count(top, "\n"); n > 80 || strings.Contains(top, "--database-url") || strings.Contains(top, "dlq replay") {
		t.Errorf("sluice --help: %d lines, want one line or two per top-level command and no deployment-wide flags:\n%s", n, top)
	}
}
