package manual_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
)

// The markers a shell block of the manual carries on the line before its
// opening fence. A block a reader would type is either run by
// TestCommandsInTheDocsRun or says why not.
var (
	markRun = "<!-- test: run -->"
	// markBackground runs each line of its block as a process in the
	// background (a stage, a dedicated reconciler: what serves until
	// stopped), stopped when the page's commands end.
	markBackground = "<!-- test: run in the background -->"
	markNotRun     = regexp.MustCompile(`^<!-- test: not run (\(.+\)|yet( .*)?) -->$`)
	// markSetup opens a comment whose lines run where it stands, before the
	// blocks after it, invisible to readers: what the page assumes was done
	// before (one above the first block runs first).
	markSetup = "<!-- test: setup"
	// markOwnPipeline gives a page a pipeline of its own, one process per
	// stage, for commands that need a stage stopped (a rewind, a resync):
	// its setup stops one with `kill $(cat .run/<stage>.pid)`.
	markOwnPipeline = "<!-- test: a pipeline of its own -->"
	shellInfo       = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// Every shell block of the manual is marked: run by the test, or not run
// and why. A marker with no shell block under it is an error too.
func TestShellBlocksAreMarked(t *testing.T) {
	t.Parallel()
	for _, p := range manual(t) {
		marked := map[int]bool{}
		for _, f := range p.fences() {
			if !shellInfo[f.info] {
				continue
			}
			prev := ""
			if f.line > 0 {
				prev = strings.TrimSpace(p.lines[f.line-1])
			}
			if !isRunMark(prev) && !markNotRun.MatchString(prev) {
				t.Errorf("%s:%d: a ```%s block without a marker on the line before it (%s, or <!-- test: not run (why) -->)",
					p.path, f.line+1, f.info, markRun)
			}
			marked[f.line-1] = true
		}
		for i, l := range p.lines {
			l = strings.TrimSpace(l)
			if (isRunMark(l) || markNotRun.MatchString(l)) && !marked[i] {
				t.Errorf("%s:%d: %s is not followed by a shell block", p.path, i+1, l)
			}
		}
	}
}

func isRunMark(l string) bool { return l == markRun || l == markBackground }

// script is what a page asks a reader to type: its setup comments and run
// blocks, in the page's order, as one bash session.
type script struct {
	page  string
	lines []string
	own   bool // a pipeline of its own
}

func scripts(t *testing.T) []script {
	t.Helper()
	var out []script
	for _, p := range manual(t) {
		s := script{page: p.path}
		runs := map[int][]string{} // by the line of the block's opening fence
		for _, f := range p.fences() {
			if !shellInfo[f.info] || f.line == 0 {
				continue
			}
			switch strings.TrimSpace(p.lines[f.line-1]) {
			case markRun:
				runs[f.line] = expectations(f.body)
			case markBackground:
				runs[f.line] = background(f.body)
			}
		}
		for i := 0; i < len(p.lines); i++ {
			switch strings.TrimSpace(p.lines[i]) {
			case markOwnPipeline:
				s.own = true
			case markSetup:
				for i++; i < len(p.lines) && strings.TrimSpace(p.lines[i]) != "-->"; i++ {
					s.lines = append(s.lines, p.lines[i])
				}
			}
			s.lines = append(s.lines, runs[i]...)
		}
		if len(s.lines) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// expectation is a command whose trailing comment says what it prints:
// `bin/sluice workspace balance $W   # => 100`.
var expectation = regexp.MustCompile(`^(.*?)\s+# => (.*)$`)

// expectations turns each command that says what it prints into a check of
// it, joining continued lines first.
func expectations(body []string) []string {
	var out []string
	for i := 0; i < len(body); i++ {
		line := body[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(body) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(body[i])
		}
		m := expectation.FindStringSubmatch(line)
		if m == nil {
			out = append(out, line)
			continue
		}
		out = append(out, fmt.Sprintf("__got=$(%s)\nprintf '%%s\\n' \"$__got\"\nif [ \"$__got\" != %s ]; then printf 'the manual says it prints %%s\\n' %s >&2; exit 1; fi",
			m[1], shellQuote(m[2]), shellQuote(m[2])))
	}
	return out
}

// background starts each command of a block (one a line, its trailing
// comment dropped) in the background; the page's session stops them as it
// ends, whichever way it ends.
func background(body []string) []string {
	out := []string{`trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT`}
	for _, line := range body {
		if line = trailingComment.ReplaceAllString(line, ""); strings.TrimSpace(line) != "" {
			out = append(out, line+" &")
		}
	}
	return out
}

var trailingComment = regexp.MustCompile(`(^|\s+)#( .*)?$`)

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// The commands of the manual's marked blocks run, page by page, as a reader
// would type them after `make run`: in a directory of the page's own with
// bin/sluice (also on PATH, as `sluice`), dev/ and .run/env, against a
// `sluice serve` of the test's own (a fresh database, topics and slot), or
// a pipeline of the page's own. Its listeners are on ports other than the
// defaults, which the pages reach as a reader on any ports does: through
// .run/env's $SLUICE_INGEST_URL, $SLUICE_ADMIN_URL and
// $SLUICE_KAFKA_BROKERS (nothing rewrites an address the page names). Its
// topics and groups are named like the page's (sluice.credits) under a
// prefix of their own. A stand-in of Stripe's API runs too: its URL is
// $STRIPE_API, and it holds the events of an outage.
func TestCommandsInTheDocsRun(t *testing.T) {
	scripts := scripts(t)
	if len(scripts) == 0 {
		t.Fatal("no page has a block marked to run")
	}
	bin := buildSluice(t)
	shared := startPipeline(t, bin, oneProcess)
	stripeAPI := startStripe(t)
	for _, s := range scripts {
		t.Run(s.page, func(t *testing.T) {
			t.Parallel() // each page makes its own tenant
			env, dir := shared, t.TempDir()
			if s.own {
				env = startPipeline(t, bin, perStage)
				dir = env.dir
			} else {
				for _, name := range []string{"bin", "dev", ".run"} {
					if err := os.Symlink(filepath.Join(env.dir, name), filepath.Join(dir, name)); err != nil {
						t.Fatal(err)
					}
				}
			}
			text := strings.Join(s.lines, "\n")
			text = sluiceName.ReplaceAllString(text, "${1}"+env.prefix+".${2}")
			ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+text)
			cmd.Dir = dir
			cmd.Env = append(withoutSluice(os.Environ()), "HOME="+dir, "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"))
			// A page that builds Go code (docs/effects.md) uses the
			// module and build caches of the test's own Go, whatever
			// HOME says, and a clone of Sluice: this one.
			cmd.Env = append(cmd.Env, goCaches(t)...)
			cmd.Env = append(cmd.Env, "SLUICE_REPO="+repoRoot(t))
			cmd.Env = append(cmd.Env, stripeAPI...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.WaitDelay = 10 * time.Second // what the page left running is stopped by then
			err := cmd.Run()
			t.Logf("%s printed:\n%s", s.page, out.String()) // shown with -v
			if err != nil {
				t.Errorf("%s: the page's commands failed (%v):\n%s\n--- the commands:\n%s\n--- the pipeline's log (tail):\n%s",
					s.page, err, out.String(), text, env.logTail())
			}
		})
	}
}

// sluiceName is a topic or consumer group name as the manual writes it,
// under the default prefix; the test's pipeline has a prefix of its own.
var sluiceName = regexp.MustCompile(`(^|[^\w.-])sluice\.(credits|subscriptions|installations|verifications|feedback|dispatch|invoices|github|notifications|tenant)\b`)

// startStripe runs a stand-in of Stripe's API (Stripe is a third party,
// never called from a test) holding an outage's events: 20 over the hour
// that began three hours ago, two of them paid invoices of one customer.
// It returns what the pages see of it: STRIPE_API, its URL (a source's
// credentials name it as their api_base), and STRIPE_OUTAGE_SINCE,
// STRIPE_OUTAGE_UNTIL and STRIPE_OUTAGE_CUSTOMER.
func startStripe(t *testing.T) []string {
	t.Helper()
	api := stripetest.New(t)
	since, span, customer := time.Now().Add(-3*time.Hour).Truncate(time.Second), time.Hour, "cus_outage"
	events, _ := stripetest.Outage(20, customer, since, span)
	api.Record(events...)
	return []string{"STRIPE_API=" + api.URL, "STRIPE_OUTAGE_SINCE=" + since.UTC().Format(time.RFC3339),
		"STRIPE_OUTAGE_UNTIL=" + since.Add(span).UTC().Format(time.RFC3339), "STRIPE_OUTAGE_CUSTOMER=" + customer}
}

// goCaches are the Go environment variables that keep a page's go commands
// on the test's own caches.
func goCaches(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	vals := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(vals) != 3 {
		t.Fatalf("go env: %q", out)
	}
	return []string{"GOPATH=" + vals[0], "GOMODCACHE=" + vals[1], "GOCACHE=" + vals[2]}
}

// repoRoot is the repository's root, absolute.
func repoRoot(t *testing.T) string {
	t.Helper()
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// defaultAddress is an address of make run's defaults a command would dial.
var defaultAddress = regexp.MustCompile(`(127\.0\.0\.1|localhost):(8080|8082|9092)\b`)

// hiddenWork is what a hidden setup may not do: load the environment,
// create what the page's commands use, or send events. What a reader's
// commands stand on is shown to the reader; a hidden setup only waits for
// the pipeline, or stands in for the world (a stage stopped).
var hiddenWork = regexp.MustCompile(`\. \.run/env|\bsluice [a-z-]+ create\b|/v1/(ingest|events)|\bcurl\b`)

// The commands a reader types work on any ports: they reach the pipeline
// through .run/env's URLs, never a default address; and each walk runs from
// setup the reader sees (operating.md's with no hidden setup at all).
func TestWalksRunFromVisibleSetupOnAnyPorts(t *testing.T) {
	t.Parallel()
	for _, s := range scripts(t) {
		for _, l := range s.lines {
			if defaultAddress.MatchString(l) {
				t.Errorf("%s: %q names a default address: use $SLUICE_INGEST_URL, $SLUICE_ADMIN_URL or $SLUICE_KAFKA_BROKERS (.run/env)", s.page, l)
			}
		}
	}
	for _, p := range manual(t) {
		for i := 0; i < len(p.lines); i++ {
			if strings.TrimSpace(p.lines[i]) != markSetup {
				continue
			}
			if p.path == "docs/operating.md" {
				t.Errorf("%s:%d: a hidden setup: the operating walk runs from what the reader sees", p.path, i+1)
			}
			for i++; i < len(p.lines) && strings.TrimSpace(p.lines[i]) != "-->"; i++ {
				if hiddenWork.MatchString(p.lines[i]) {
					t.Errorf("%s:%d: a hidden setup does what the reader's commands stand on (%q): show it in a run block", p.path, i+1, p.lines[i])
				}
			}
		}
	}
}

// withoutSluice is env without Sluice's settings, so a page's commands know
// the pipeline only from the .run/env the page loads, as a reader's do (a
// test run by make test has the developer's own in its environment).
func withoutSluice(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SLUICE_") {
			out = append(out, kv)
		}
	}
	return out
}
