// Package lockplan reads Sluice's SQL migrations (goose's files) and
// estimates, from their text alone, the lock each statement takes on which
// table: what `sluice migrate --plan` prints before an upgrade, and what
// the migrator reads to know which indexes a migration builds
// concurrently.
//
// It is an estimate. It reads each statement with a small set of rules
// drawn from Postgres's documentation of lock levels (the "Table-Level
// Locks" section and each command's page), not with Postgres's parser:
// what it does not recognise it says it does not know (Known false), and
// the locks taken inside procedural code (DO blocks, functions) are not
// read at all.
package lockplan

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Migration is one migration file's Up section, as goose runs it.
type Migration struct {
	Version int64
	File    string
	// Transaction is false for a file marked "-- +goose NO TRANSACTION":
	// each statement then commits on its own, and a failure leaves the
	// ones before it applied (so every statement must be safe to run
	// again).
	Transaction bool
	Statements  []Statement
}

// ReadFS reads every migration at the root of fsys (NNNNN_what.sql),
// sorted by version.
func ReadFS(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		m, err := Parse(name, b)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Migration) int { return int(a.Version - b.Version) })
	return out, nil
}

// Parse reads one migration file: its version from the name, its Up
// statements split as goose splits them (a statement ends on a line whose
// last word, comments aside, ends with ";", or at "-- +goose
// StatementEnd"), each classified.
func Parse(file string, sql []byte) (Migration, error) {
	prefix, _, _ := strings.Cut(file, "_")
	v, err := strconv.ParseInt(prefix, 10, 64)
	if err != nil {
		return Migration{}, fmt.Errorf("migration %s: its name does not start with a version", file)
	}
	p := &parser{m: Migration{Version: v, File: file, Transaction: true}, created: map[string]bool{}}
	sc := bufio.NewScanner(bytes.NewReader(sql))
	sc.Buffer(nil, 4<<20)
	for n := 1; sc.Scan() && !p.done; n++ {
		p.line(n, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return Migration{}, fmt.Errorf("read %s: %w", file, err)
	}
	p.flush()
	return p.m, nil
}

// parser is goose's reading of a file, one line at a time.
type parser struct {
	m         Migration
	buf       strings.Builder
	first     int  // the line of buf's first line
	up, block bool // inside the Up section; inside StatementBegin/End
	done      bool // the Down section began
	created   map[string]bool
}

func (p *parser) line(n int, line string) {
	trimmed := strings.TrimSpace(line)
	if strings.HasPrefix(trimmed, "--") && strings.Contains(trimmed, "+goose") {
		p.annotation(trimmed)
		return
	}
	if !p.up || (p.buf.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "--"))) {
		return
	}
	if p.buf.Len() == 0 {
		p.first = n
	}
	p.buf.WriteString(line)
	p.buf.WriteByte('\n')
	if !p.block && endsStatement(line) {
		p.flush()
	}
}

func (p *parser) annotation(line string) {
	switch annotation(line) {
	case "up":
		p.up = true
	case "down":
		p.flush()
		p.done = true
	case "no transaction":
		p.m.Transaction = false
	case "statementbegin":
		p.block = true
	case "statementend":
		p.block = false
		p.flush()
	}
}

func (p *parser) flush() {
	if text := strings.TrimSpace(p.buf.String()); text != "" {
		p.m.Statements = append(p.m.Statements, classifyIn(p.first, text, p.created))
	}
	p.buf.Reset()
}

// classifyIn classifies a statement after those of its migration that
// created the tables in created: its locks on them delay no one.
func classifyIn(line int, text string, created map[string]bool) Statement {
	s := Classify(line, text)
	allNew := len(s.Locks) > 0
	for i, l := range s.Locks {
		s.Locks[i].New = created[l.Table]
		allNew = allNew && s.Locks[i].New
	}
	if allNew {
		s.Note = "on a table this migration creates: no other session uses it yet"
	}
	if s.Creates != "" {
		created[s.Creates] = true
	}
	return s
}

func annotation(line string) string {
	a := strings.TrimSpace(strings.Replace(strings.ReplaceAll(line, "--", ""), "+goose", "", 1))
	return strings.ToLower(a)
}

// endsStatement is goose's rule: the line's last word before a comment
// ends with a semicolon.
func endsStatement(line string) bool {
	last := ""
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "--") {
			break
		}
		last = w
	}
	return strings.HasSuffix(last, ";")
}

// ConcurrentIndexes names the indexes the migration builds with CREATE
// INDEX CONCURRENTLY: an interrupted build leaves such an index behind,
// invalid, and "IF NOT EXISTS" would then skip it for good.
func (m Migration) ConcurrentIndexes() []string {
	var out []string
	for _, s := range m.Statements {
		if s.Builds != "" {
			out = append(out, s.Builds)
		}
	}
	return out
}

// Strongest is the strongest lock any statement of m takes.
func (m Migration) Strongest() Mode {
	var strongest Mode
	for _, s := range m.Statements {
		strongest = max(strongest, s.Strongest())
	}
	return strongest
}

// LeavesReadsAndWrites reports whether every statement of m is read by a
// rule and none takes more than SHARE UPDATE EXCLUSIVE on a table others
// use: while its statements wait for their locks, no read or write waits
// behind them (CREATE and DROP INDEX CONCURRENTLY, new tables).
func (m Migration) LeavesReadsAndWrites() bool {
	for _, s := range m.Statements {
		if !s.Known {
			return false
		}
	}
	return m.Strongest() <= ShareUpdateExclusive
}
