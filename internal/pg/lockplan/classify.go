package lockplan

import (
	"regexp"
	"strings"
)

// Lock is one table-level lock a statement takes.
type Lock struct {
	Mode  Mode
	Table string // as the statement names it; "the table of index x" for an index
	// New: the table is one this migration created before: no other
	// session uses it yet, so the lock delays nothing.
	New bool
}

// Statement is one statement of a migration and what it is estimated to
// lock.
type Statement struct {
	Line  int    // its first line in the file
	SQL   string // as goose sends it
	Locks []Lock
	// Note says what the lock mode alone does not: a scan or rewrite of
	// the whole table under the lock, a wait for older transactions, row
	// locks kept until the migration commits.
	Note string
	// Known is false when no rule read the statement: its locks are
	// unknown (procedural code, a command the rules do not cover).
	Known bool
	// Builds names the index a CREATE INDEX CONCURRENTLY builds.
	Builds string
	// Creates names the table a CREATE TABLE makes.
	Creates string
}

// Strongest is the strongest mode among s's locks on tables others use
// (not the ones its migration created before it).
func (s Statement) Strongest() Mode {
	var m Mode
	for _, l := range s.Locks {
		if !l.New {
			m = max(m, l.Mode)
		}
	}
	return m
}

// Summary is the statement's first line, for a listing.
func (s Statement) Summary() string {
	line, _, _ := strings.Cut(strings.TrimSpace(s.SQL), "\n")
	return strings.TrimSpace(line)
}

const ident = `((?:"[^"]+"|[\w$]+)(?:\.(?:"[^"]+"|[\w$]+))?)`

// rule classifies the statements its pattern matches (on the text with
// comments removed, whitespace collapsed, case ignored).
type rule struct {
	re       *regexp.Regexp
	classify func(s *Statement, m []string)
}

// on locks each relation named in the match's group (every table of the
// database when the statement names none, as VACUUM and ANALYZE do).
func on(mode Mode, note string, group int) func(*Statement, []string) {
	return func(s *Statement, m []string) {
		tables := names(m[group])
		if len(tables) == 0 {
			tables = []string{"every table"}
		}
		for _, t := range tables {
			s.Locks = append(s.Locks, Lock{Mode: mode, Table: t})
		}
		s.Note = note
	}
}

func r(pattern string, f func(*Statement, []string)) rule {
	return rule{regexp.MustCompile(`(?is)^` + pattern), f}
}

var rules = []rule{
	r(`CREATE (?:UNIQUE )?INDEX CONCURRENTLY (?:IF NOT EXISTS )?(?:`+ident+` )?ON (?:ONLY )?`+ident, func(s *Statement, m []string) {
		s.Locks = []Lock{{Mode: ShareUpdateExclusive, Table: unquote(m[2])}}
		s.Builds = unquote(m[1])
		s.Note = "builds the index while writes go on: reads the table twice and waits for every transaction older than it; interrupted, it leaves an invalid index (the migrator drops it before trying again)"
	}),
	r(`CREATE (?:UNIQUE )?INDEX (?:IF NOT EXISTS )?(?:`+ident+` )?ON (?:ONLY )?`+ident,
		func(s *Statement, m []string) {
			on(Share, "blocks writes while it reads the whole table to build the index (CONCURRENTLY does not)", 2)(s, m)
		}),
	r(`DROP INDEX CONCURRENTLY (?:IF EXISTS )?(.+?)(?: CASCADE| RESTRICT)?;?$`, indexLock(ShareUpdateExclusive, "waits for transactions using the index; reads and writes go on")),
	r(`DROP INDEX (?:IF EXISTS )?(.+?)(?: CASCADE| RESTRICT)?;?$`, indexLock(AccessExclusive, "brief once granted; CONCURRENTLY would not block reads and writes")),
	r(`CREATE (?:UNLOGGED |TEMP |TEMPORARY )?TABLE (?:IF NOT EXISTS )?`+ident+`(.*)`, createTable),
	r(`ALTER TABLE (?:IF EXISTS )?(?:ONLY )?`+ident+` (.*?);?$`, alterTable),
	r(`ALTER INDEX (?:IF EXISTS )?`+ident+` (?:RENAME|SET \(|RESET \()`, indexLock(ShareUpdateExclusive, "")),
	r(`ALTER INDEX (?:IF EXISTS )?`+ident, indexLock(AccessExclusive, "")),
	r(`(?:DROP TABLE|TRUNCATE(?: TABLE)?) (?:IF EXISTS )?(?:ONLY )?(.+?)(?: CASCADE| RESTRICT| RESTART IDENTITY| CONTINUE IDENTITY)?;?$`,
		on(AccessExclusive, "", 1)),
	r(`INSERT INTO `+ident, on(RowExclusive, "row locks on the rows it writes, kept until the migration commits", 1)),
	r(`UPDATE (?:ONLY )?`+ident, on(RowExclusive, "locks every row it changes until the migration commits: a backfill of a large table belongs in batches outside the migration", 1)),
	r(`DELETE FROM (?:ONLY )?`+ident, on(RowExclusive, "locks every row it deletes until the migration commits: a large purge belongs in batches outside the migration", 1)),
	r(`CREATE OR REPLACE (?:TEMP |TEMPORARY )?(?:RECURSIVE )?VIEW `+ident, on(AccessExclusive, "the view only", 1)),
	r(`CREATE (?:TEMP |TEMPORARY )?(?:RECURSIVE )?(?:MATERIALIZED )?VIEW `, none("a new view")),
	r(`REFRESH MATERIALIZED VIEW CONCURRENTLY `+ident, on(Exclusive, "", 1)),
	r(`REFRESH MATERIALIZED VIEW `+ident, on(AccessExclusive, "", 1)),
	r(`DROP (?:MATERIALIZED VIEW|VIEW|SEQUENCE) (?:IF EXISTS )?(.+?)(?: CASCADE| RESTRICT)?;?$`, on(AccessExclusive, "the dropped objects only", 1)),
	r(`CREATE (?:OR REPLACE )?(?:CONSTRAINT )?TRIGGER .*? ON (?:ONLY )?`+ident, on(ShareRowExclusive, "", 1)),
	r(`DROP TRIGGER (?:IF EXISTS )?\S+ ON `+ident, on(AccessExclusive, "", 1)),
	r(`(?:CREATE|ALTER) PUBLICATION \S+ (?:FOR|ADD|SET|DROP) TABLE (?:ONLY )?(.+?)(?: WITH .*)?;?$`, on(ShareUpdateExclusive, "", 1)),
	r(`(?:CREATE|ALTER|DROP) PUBLICATION `, none("")),
	r(`LOCK (?:TABLE )?(?:ONLY )?(.+?)(?: IN (.+?) MODE)?(?: NOWAIT)?;?$`, lockTable),
	r(`VACUUM (?:\(.*?\) )?FULL(?: VERBOSE)?(?: (.+?))?;?$`, on(AccessExclusive, "rewrites the table", 1)),
	r(`(?:ANALYZE|VACUUM)(?: \(.*?\))?(?: VERBOSE)?(?: (.+?))?;?$`, on(ShareUpdateExclusive, "reads the table", 1)),
	r(`CLUSTER(?: VERBOSE)?(?: `+ident+`)?`, on(AccessExclusive, "rewrites the table", 1)),
	r(`REINDEX (?:\(.*?\) )?(?:INDEX|TABLE) CONCURRENTLY `+ident, on(ShareUpdateExclusive, "rebuilds while writes go on", 1)),
	r(`REINDEX (?:\(.*?\) )?(?:INDEX|TABLE) `+ident, on(Share, "blocks writes while it rebuilds", 1)),
	r(`COMMENT ON (?:TABLE|INDEX|VIEW|MATERIALIZED VIEW) `+ident, on(ShareUpdateExclusive, "", 1)),
	r(`COMMENT ON COLUMN `+ident+`\.`, on(ShareUpdateExclusive, "", 1)),
	r(`CREATE STATISTICS .*? FROM `+ident, on(ShareUpdateExclusive, "", 1)),
	r(`(?:CREATE|ALTER|DROP) (?:OR REPLACE )?(?:FUNCTION|PROCEDURE|TYPE|DOMAIN|SCHEMA|EXTENSION|SEQUENCE|ROLE|AGGREGATE|COLLATION|CAST|OPERATOR)\b`,
		none("the catalog only; what a function does when called is not read here")),
	r(`COMMENT ON `, none("")),
	r(`(?:GRANT|REVOKE|ALTER DEFAULT PRIVILEGES|SET|RESET) `, none("")),
	r(`(?:SELECT|WITH) `, func(s *Statement, _ []string) {
		s.Locks = []Lock{{Mode: AccessShare, Table: "what it reads"}}
		s.Note = "reads; what a function it calls does is not read here"
	}),
}

func none(note string) func(*Statement, []string) {
	return func(s *Statement, _ []string) { s.Note = note }
}

// indexLock locks the table of each index named in group 1.
func indexLock(mode Mode, note string) func(*Statement, []string) {
	return func(s *Statement, m []string) {
		for _, ix := range names(m[1]) {
			s.Locks = append(s.Locks, Lock{Mode: mode, Table: "the table of index " + ix})
		}
		s.Note = note
	}
}

func lockTable(s *Statement, m []string) {
	mode := AccessExclusive
	if m[2] != "" {
		if parsed, ok := parseMode(m[2]); ok {
			mode = parsed
		}
	}
	for _, t := range names(m[1]) {
		s.Locks = append(s.Locks, Lock{Mode: mode, Table: t})
	}
}

var references = regexp.MustCompile(`(?i)\bREFERENCES ` + ident)

// createTable: a new table locks nothing that exists, but the tables its
// foreign keys reference (SHARE ROW EXCLUSIVE) and, for a partition, its
// parent (ACCESS EXCLUSIVE).
func createTable(s *Statement, m []string) {
	s.Creates = unquote(m[1])
	rest := m[2]
	if p := regexp.MustCompile(`(?i)^\s*PARTITION OF ` + ident).FindStringSubmatch(rest); p != nil {
		s.Locks = append(s.Locks, Lock{Mode: AccessExclusive, Table: unquote(p[1])})
		s.Note = "a new partition: ACCESS EXCLUSIVE on its parent, briefly"
	}
	for _, ref := range references.FindAllStringSubmatch(rest, -1) {
		s.Locks = append(s.Locks, Lock{Mode: ShareRowExclusive, Table: unquote(ref[1])})
	}
	if s.Note == "" {
		s.Note = "a new table"
	}
}

// names splits a comma-separated list of relation names.
func names(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = unquote(strings.TrimSpace(n)); n != "" {
			out = append(out, n)
		}
	}
	return out
}

func unquote(name string) string { return strings.ReplaceAll(strings.TrimSpace(name), `"`, "") }

var comments = regexp.MustCompile(`--[^\n]*`)

// Classify estimates the locks of one statement, at line of its file.
func Classify(line int, sql string) Statement {
	s := Statement{Line: line, SQL: sql}
	text := strings.Join(strings.Fields(comments.ReplaceAllString(sql, "")), " ")
	if strings.HasPrefix(strings.ToUpper(text), "DO ") {
		s.Note = "procedural code (DO): its statements are not read here; check them by hand"
		return s
	}
	for _, r := range rules {
		if m := r.re.FindStringSubmatch(text); m != nil {
			s.Known = true // a rule may say otherwise
			r.classify(&s, m)
			return s
		}
	}
	s.Note = "not recognised: its locks are unknown; check it by hand"
	return s
}
