package cli

// How text output shows what others wrote: tenant and workspace names,
// accounts, customers, event ids and types, reasons. Every text printer
// passes them through shown (table does it for every cell).

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// shown is s as text output prints it: control characters, bidirectional
// controls and bytes that are not UTF-8 escaped as strconv.Quote writes
// them (\x1b, \n, \u202e, \xff), so a name cannot move the cursor,
// recolour the terminal or forge a line of a table. Ordinary text, a
// backslash included, prints unchanged.
func shown(s string) string { return escape(s, false) }

// shownMessage is an error message as stderr prints it: as shown, but its
// own line breaks and indentation (newline, tab) kept.
func shownMessage(s string) string { return escape(s, true) }

func escape(s string, keepLayout bool) string {
	hazard := func(r rune, size int) bool {
		switch {
		case r == utf8.RuneError && size == 1: // not UTF-8
			return true
		case keepLayout && (r == '\n' || r == '\t'):
			return false
		}
		return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
	}
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if hazard(r, size) {
			b.WriteString(s[done:i])
			if r == utf8.RuneError {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				q := strconv.QuoteRune(r)
				b.WriteString(q[1 : len(q)-1])
			}
			done = i + size
		}
		i += size
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// table prints rows aligned in columns under a header (tab-separated
// column names). Every cell is printed with fmt.Sprint and shown, so one
// holding a tab or a newline stays in its cell.
type table struct{ w *tabwriter.Writer }

func newTable(out io.Writer, header string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)}
	fmt.Fprintln(t.w, header)
	return t
}

func (t *table) row(cells ...any) {
	for i, c := range cells {
		if i > 0 {
			io.WriteString(t.w, "\t")
		}
		io.WriteString(t.w, shown(fmt.Sprint(c)))
	}
	io.WriteString(t.w, "\n")
}

func (t *table) flush() error { return t.w.Flush() }
