package manual_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var link = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)

// Every relative link of the manual names a file or folder that exists, and
// its #fragment a heading of the page it names (GitHub's anchors). Links to
// Go files are refused: packages move, so the manual writes Go paths as code
// spans and links only to pages, headings and lasting top-level entries.
func TestLinksResolve(t *testing.T) {
	t.Parallel()
	pages := manual(t)
	anchors := map[string]map[string]bool{}
	for _, p := range pages {
		anchors[p.path] = p.anchors()
	}
	for _, p := range pages {
		for n, l := range p.prose() {
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(l, ""), -1) {
				if problem := checkLink(p.path, m[1], anchors); problem != "" {
					t.Errorf("%s:%d: link %s: %s", p.path, n+1, m[1], problem)
				}
			}
		}
	}
}

// checkLink says what is wrong with a link target of the page at from, or
// nothing. anchors holds the manual's pages' headings; other Markdown files
// are read when a fragment names them.
func checkLink(from, target string, anchors map[string]map[string]bool) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	file, fragment, _ := strings.Cut(target, "#")
	to := from
	if file != "" {
		to = path.Clean(path.Join(path.Dir(from), file))
		if to == ".." || strings.HasPrefix(to, "../") {
			return "points outside the repository"
		}
		if strings.HasSuffix(to, ".go") {
			return "links to a Go file; write Go paths as code spans (packages move)"
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(to))); err != nil {
			return "no such file or folder: " + to
		}
	}
	if fragment == "" {
		return ""
	}
	if !strings.HasSuffix(to, ".md") {
		return "a #fragment on a file that is not Markdown"
	}
	headings, ok := anchors[to]
	if !ok {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(to)))
		if err != nil {
			return err.Error()
		}
		headings = page{path: to, lines: strings.Split(string(b), "\n")}.anchors()
		anchors[to] = headings
	}
	if !headings[fragment] {
		return "no heading #" + fragment + " in " + to
	}
	return ""
}

// The anchors are GitHub's.
func TestAnchorsAreGitHubs(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"Limits and fairness":                       "limits-and-fairness",
		"First-party events: `POST /v1/events`":     "first-party-events-post-v1events",
		"Tenants' own event types":                  "tenants-own-event-types",
		`"Why didn't I get my credits?"`:            "why-didnt-i-get-my-credits",
		"3. Dead letters":                           "3-dead-letters",
		"The relay (cdc)":                           "the-relay-cdc",
		"Upgrading from a version (schema 8)":       "upgrading-from-a-version-schema-8",
		"[Linked](other.md) *and* `code_span`":      "linked-and-code_span",
		"Dependencies, and why each is here":        "dependencies-and-why-each-is-here",
		"Storage and retention":                     "storage-and-retention",
		"Kafka: topics, records, consumer groups":   "kafka-topics-records-consumer-groups",
		"Administration: the CLI and the admin API": "administration-the-cli-and-the-admin-api",
	} {
		if got := anchor(text); got != want {
			t.Errorf("anchor(%q) = %q, want %q", text, got, want)
		}
	}
}

// README.md is a door: at most 300 lines, and every page of the manual is
// reachable from the index, docs/README.md.
func TestReadmeIsADoorAndTheIndexComplete(t *testing.T) {
	t.Parallel()
	readme := readPage(t, "README.md")
	if n := len(readme.lines) - 1; n > 300 {
		t.Errorf("README.md has %d lines; at most 300 (move the rest into docs/)", n)
	}
	index := strings.Join(readPage(t, "docs/README.md").lines, "\n")
	for _, p := range manual(t) {
		if !strings.HasPrefix(p.path, "docs/") || p.path == "docs/README.md" {
			continue
		}
		if !strings.Contains(index, "("+strings.TrimPrefix(p.path, "docs/")+")") {
			t.Errorf("docs/README.md does not link %s", p.path)
		}
	}
}

// make bench-docs writes the latest bench table between these markers of
// docs/performance.md; without them it has nowhere to write.
func TestPerformancePageHasTheBenchMarkers(t *testing.T) {
	t.Parallel()
	p := readPage(t, "docs/performance.md")
	var begin, end int
	for i, l := range p.lines {
		switch {
		case strings.HasPrefix(l, "<!-- bench:begin"):
			begin = i + 1
		case l == "<!-- bench:end -->":
			end = i + 1
		}
	}
	if begin == 0 || end <= begin {
		t.Errorf("docs/performance.md: want <!-- bench:begin ... --> then <!-- bench:end --> on lines of their own (begin %d, end %d)", begin, end)
	}
}
