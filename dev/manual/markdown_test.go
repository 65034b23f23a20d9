package manual_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package's directory (dev/manual).
const root = "../.."

// page is one Markdown file of the manual.
type page struct {
	path  string // from the repository's root, e.g. docs/kafka.md
	lines []string
}

// manual reads README.md and every docs/*.md.
func manual(t *testing.T) []page {
	t.Helper()
	paths := []string{"README.md"}
	matches, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range matches {
		rel, _ := filepath.Rel(root, m)
		paths = append(paths, filepath.ToSlash(rel))
	}
	var pages []page
	for _, p := range paths {
		pages = append(pages, readPage(t, p))
	}
	return pages
}

func readPage(t *testing.T, path string) page {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return page{path: path, lines: strings.Split(string(b), "\n")}
}

// fence is a fenced code block: the line of its opening fence (0-based),
// its info string, and its body.
type fence struct {
	line int
	info string
	body []string
}

// fences lists a page's fenced code blocks.
func (p page) fences() []fence {
	var out []fence
	var cur *fence
	for i, l := range p.lines {
		trimmed := strings.TrimSpace(l)
		switch {
		case cur == nil && strings.HasPrefix(trimmed, "```"):
			cur = &fence{line: i, info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))}
		case cur != nil && trimmed == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body = append(cur.body, l)
		}
	}
	return out
}

// prose is a page's lines outside fenced code blocks, with their numbers
// (0-based); lines inside fences come back empty.
func (p page) prose() []string {
	out := slices.Clone(p.lines)
	in := false
	for i, l := range out {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			out[i] = ""
			continue
		}
		if in {
			out[i] = ""
		}
	}
	return out
}

var (
	codeSpan = regexp.MustCompile("``[^`]*``|`[^`]*`")
	heading  = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// anchors are the fragments GitHub gives a page's headings: the heading's
// text lowercased, punctuation other than '-' and '_' dropped, spaces turned
// into '-', and a repeated anchor suffixed -1, -2...
func (p page) anchors() map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range p.prose() {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		a := anchor(m[2])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func anchor(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	text = strings.NewReplacer("`", "", "*", "").Replace(text)
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}
