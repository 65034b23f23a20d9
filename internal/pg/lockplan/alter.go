package lockplan

import (
	"regexp"
	"strings"
)

// action is what one ALTER TABLE subcommand takes: a mode on the table
// altered, a lock on another table it names, and what else it does.
type action struct {
	re    *regexp.Regexp
	mode  Mode
	note  string
	other func(m []string) []Lock
}

func a(pattern string, mode Mode, note string) action {
	return action{re: regexp.MustCompile(`(?is)^` + pattern), mode: mode, note: note}
}

// referenced locks the table a foreign key references.
func referenced(m []string) []Lock {
	if ref := references.FindStringSubmatch(m[0]); ref != nil {
		return []Lock{{Mode: ShareRowExclusive, Table: unquote(ref[1])}}
	}
	return nil
}

// Volatile defaults (a function whose value differs per row) and stored
// generated columns make ADD COLUMN write every row anew; a constant or
// stable default (now()) is kept in the catalog.
const rewritingColumn = `(?:.*\bDEFAULT\b.*\b(?:clock_timestamp|random|gen_random_uuid|uuid_generate_v\d\w*|nextval|timeofday|statement_timestamp)\s*\(|.*\bGENERATED ALWAYS AS\b.*\bSTORED\b|\S+ (?:big|small)?serial\b)`

var actions = []action{
	{re: regexp.MustCompile(`(?is)^ADD (?:CONSTRAINT \S+ )?FOREIGN KEY .*\bNOT VALID$`), mode: ShareRowExclusive,
		note: "brief: existing rows are checked later (VALIDATE CONSTRAINT)", other: referenced},
	{re: regexp.MustCompile(`(?is)^ADD (?:CONSTRAINT \S+ )?FOREIGN KEY `), mode: ShareRowExclusive,
		note: "checks every row under the lock: writes wait for a scan of the table (NOT VALID, then VALIDATE, would not)", other: referenced},
	a(`ADD (?:CONSTRAINT \S+ )?CHECK .*\bNOT VALID$`, AccessExclusive, "brief: existing rows are checked later (VALIDATE CONSTRAINT)"),
	a(`ADD (?:CONSTRAINT \S+ )?CHECK `, AccessExclusive, "checks every row under the lock: reads and writes wait for a scan of the table"),
	a(`ADD (?:CONSTRAINT \S+ )?(?:PRIMARY KEY|UNIQUE) USING INDEX `, AccessExclusive, "brief: the index exists already"),
	a(`ADD (?:CONSTRAINT \S+ )?(?:PRIMARY KEY|UNIQUE|EXCLUDE)\b`, AccessExclusive, "builds an index under the lock: reads and writes wait while it reads the whole table (build it CONCURRENTLY, then ADD ... USING INDEX)"),
	{re: regexp.MustCompile(`(?is)^ADD (?:COLUMN )?(?:IF NOT EXISTS )?` + rewritingColumn), mode: AccessExclusive,
		note: "rewrites the whole table under the lock (a volatile default, a serial or a stored generated column): reads and writes wait"},
	a(`ADD (?:COLUMN )?(?:IF NOT EXISTS )?.*\b(?:UNIQUE|PRIMARY KEY)\b`, AccessExclusive, "builds an index under the lock: reads and writes wait while it reads the whole table"),
	{re: regexp.MustCompile(`(?is)^ADD (?:COLUMN )?(?:IF NOT EXISTS )?.*\bREFERENCES `), mode: AccessExclusive,
		note: "brief: a new column with a foreign key", other: referenced},
	a(`ADD (?:COLUMN )?`, AccessExclusive, "brief: the catalog only"),
	a(`DROP (?:COLUMN |CONSTRAINT )?`, AccessExclusive, "brief; statements of the release before that use what it drops fail (contract one release after the expansion)"),
	a(`RENAME `, AccessExclusive, "brief; statements of the release before that use the old name fail"),
	a(`ALTER (?:COLUMN )?\S+ (?:SET DATA )?TYPE `, AccessExclusive, "may rewrite the table and its indexes under the lock"),
	a(`ALTER (?:COLUMN )?\S+ SET NOT NULL`, AccessExclusive, "reads every row under the lock, unless a valid CHECK (col IS NOT NULL) proves it"),
	a(`ALTER (?:COLUMN )?\S+ (?:SET STATISTICS|SET \(|RESET \()`, ShareUpdateExclusive, ""),
	a(`ALTER (?:COLUMN )?\S+ `, AccessExclusive, "brief: the catalog only"),
	a(`VALIDATE CONSTRAINT `, ShareUpdateExclusive, "reads the whole table; reads and writes go on"),
	{re: regexp.MustCompile(`(?is)^ATTACH PARTITION ` + ident), mode: ShareUpdateExclusive,
		note:  "reads the partition under the lock unless a CHECK matching its bounds exists",
		other: func(m []string) []Lock { return []Lock{{Mode: AccessExclusive, Table: unquote(m[1])}} }},
	{re: regexp.MustCompile(`(?is)^DETACH PARTITION ` + ident + ` CONCURRENTLY`), mode: ShareUpdateExclusive,
		note: "cannot run in a transaction", other: func(m []string) []Lock { return []Lock{{Mode: ShareUpdateExclusive, Table: unquote(m[1])}} }},
	{re: regexp.MustCompile(`(?is)^DETACH PARTITION ` + ident), mode: AccessExclusive,
		other: func(m []string) []Lock { return []Lock{{Mode: AccessExclusive, Table: unquote(m[1])}} }},
	a(`SET (?:LOGGED|UNLOGGED|TABLESPACE|ACCESS METHOD)\b`, AccessExclusive, "rewrites the table under the lock"),
	a(`(?:SET|RESET) \(`, ShareUpdateExclusive, ""),
	a(`(?:SET WITHOUT CLUSTER|CLUSTER ON)\b`, ShareUpdateExclusive, ""),
	a(`(?:ENABLE|DISABLE) (?:ALWAYS |REPLICA )?TRIGGER\b`, ShareRowExclusive, ""),
	a(`(?:ENABLE|DISABLE|FORCE|NO FORCE) ROW LEVEL SECURITY|REPLICA IDENTITY|OWNER TO|INHERIT|NO INHERIT|OF |NOT OF`, AccessExclusive, ""),
}

// alterTable classifies each subcommand of an ALTER TABLE: the table takes
// the strongest of their modes; a subcommand no rule reads makes the
// statement unknown, assumed ACCESS EXCLUSIVE.
func alterTable(s *Statement, m []string) {
	table := unquote(m[1])
	var mode Mode
	var notes []string
	known := true
	for _, act := range splitTopLevel(m[2]) {
		matched := false
		for _, rule := range actions {
			am := rule.re.FindStringSubmatch(act)
			if am == nil {
				continue
			}
			matched = true
			mode = max(mode, rule.mode)
			if rule.note != "" && !strings.Contains(strings.Join(notes, "; "), rule.note) {
				notes = append(notes, rule.note)
			}
			if rule.other != nil {
				s.Locks = append(s.Locks, rule.other(am)...)
			}
			break
		}
		if !matched {
			known = false
			mode = AccessExclusive
			notes = append(notes, "not recognised: "+act)
		}
	}
	s.Locks = append([]Lock{{Mode: mode, Table: table}}, s.Locks...)
	s.Note = strings.Join(notes, "; ")
	if !known {
		s.Note = "assumed ACCESS EXCLUSIVE; " + s.Note
	}
	s.Known = known
}

// splitTopLevel splits an ALTER TABLE's subcommands at the commas outside
// parentheses and quotes.
func splitTopLevel(text string) []string {
	var out []string
	depth, start := 0, 0
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(text[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(text[start:]))
}
