package lockplan

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Each kind of statement a migration holds gets the lock Postgres's
// documentation gives it, on the table it names.
func TestStatementsTakeTheLocksPostgresDocuments(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sql   string
		want  []Lock
		note  string // a word the note must hold
		known bool
	}{
		{`CREATE INDEX inbox_x ON inbox (x);`, []Lock{{Mode: Share, Table: "inbox"}}, "blocks writes", true},
		{`CREATE UNIQUE INDEX IF NOT EXISTS inbox_x ON ONLY public.inbox (x);`, []Lock{{Mode: Share, Table: "public.inbox"}}, "", true},
		{`CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_x ON inbox (x);`, []Lock{{Mode: ShareUpdateExclusive, Table: "inbox"}}, "invalid", true},
		{`DROP INDEX inbox_x;`, []Lock{{Mode: AccessExclusive, Table: "the table of index inbox_x"}}, "", true},
		{`DROP INDEX CONCURRENTLY IF EXISTS inbox_x;`, []Lock{{Mode: ShareUpdateExclusive, Table: "the table of index inbox_x"}}, "", true},
		{`ALTER TABLE inbox ADD COLUMN note text;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "brief", true},
		{`ALTER TABLE inbox ADD COLUMN seen timestamptz NOT NULL DEFAULT now();`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "brief", true},
		{`ALTER TABLE inbox ADD COLUMN seen timestamptz DEFAULT clock_timestamp();`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "rewrites", true},
		{`ALTER TABLE inbox ADD COLUMN n bigserial;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "rewrites", true},
		{`ALTER TABLE inbox ALTER COLUMN status SET NOT NULL;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "every row", true},
		{`ALTER TABLE inbox ALTER COLUMN n TYPE bigint;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "rewrite", true},
		{`ALTER TABLE inbox ADD CONSTRAINT inbox_src FOREIGN KEY (source_id) REFERENCES sources (id) NOT VALID;`,
			[]Lock{{Mode: ShareRowExclusive, Table: "inbox"}, {Mode: ShareRowExclusive, Table: "sources"}}, "VALIDATE", true},
		{`ALTER TABLE inbox VALIDATE CONSTRAINT inbox_src;`, []Lock{{Mode: ShareUpdateExclusive, Table: "inbox"}}, "go on", true},
		{`ALTER TABLE deliveries SET (fillfactor = 50), ALTER COLUMN state SET STATISTICS 500;`, []Lock{{Mode: ShareUpdateExclusive, Table: "deliveries"}}, "", true},
		{`ALTER TABLE inbox ADD COLUMN a int, DROP COLUMN b;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "release before", true},
		{`ALTER TABLE inbox_payloads ATTACH PARTITION inbox_payloads_p1 FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');`,
			[]Lock{{Mode: ShareUpdateExclusive, Table: "inbox_payloads"}, {Mode: AccessExclusive, Table: "inbox_payloads_p1"}}, "", true},
		{`ALTER TABLE inbox FROBNICATE;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "assumed", false},
		{`CREATE TABLE inbox_p1 PARTITION OF inbox_payloads FOR VALUES FROM ('2026-01-01') TO ('2026-01-02');`,
			[]Lock{{Mode: AccessExclusive, Table: "inbox_payloads"}}, "partition", true},
		{`CREATE TABLE notes (id bigint PRIMARY KEY, source_id uuid REFERENCES sources (id));`, []Lock{{Mode: ShareRowExclusive, Table: "sources"}}, "new table", true},
		{`UPDATE inbox SET status = 'x' WHERE status IS NULL;`, []Lock{{Mode: RowExclusive, Table: "inbox"}}, "batches", true},
		{`LOCK TABLE inbox, outbox IN SHARE ROW EXCLUSIVE MODE;`, []Lock{{Mode: ShareRowExclusive, Table: "inbox"}, {Mode: ShareRowExclusive, Table: "outbox"}}, "", true},
		{`LOCK inbox;`, []Lock{{Mode: AccessExclusive, Table: "inbox"}}, "", true},
		{`DROP TABLE IF EXISTS a, b CASCADE;`, []Lock{{Mode: AccessExclusive, Table: "a"}, {Mode: AccessExclusive, Table: "b"}}, "", true},
		{`CREATE PUBLICATION p FOR TABLE outbox WITH (publish = 'insert');`, []Lock{{Mode: ShareUpdateExclusive, Table: "outbox"}}, "", true},
		{`CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;`, nil, "catalog", true},
		{"DO $$\nBEGIN\n  PERFORM 1;\nEND\n$$;", nil, "by hand", false},
		{`MERGE INTO inbox USING x ON true WHEN MATCHED THEN DO NOTHING;`, nil, "unknown", false},
	} {
		s := Classify(1, c.sql)
		if !slices.Equal(s.Locks, c.want) || s.Known != c.known || !strings.Contains(s.Note, c.note) {
			t.Errorf("%s\n  = %v known %v (%s)\n  want %v known %v, a note saying %q", c.sql, s.Locks, s.Known, s.Note, c.want, c.known, c.note)
		}
	}
}

// Statements are split as goose splits them, with their first line, the
// Up section only; NO TRANSACTION is read; a table the migration creates
// is locked at no one's expense.
func TestMigrationsAreSplitAsGooseRunsThem(t *testing.T) {
	t.Parallel()
	m, err := Parse("00042_example.sql", []byte(`-- +goose NO TRANSACTION
-- +goose Up
-- a comment before the first statement
CREATE TABLE notes (
    id bigint PRIMARY KEY -- a comment; with a semicolon
);
CREATE INDEX CONCURRENTLY notes_id ON notes (id);

-- +goose StatementBegin
CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    RETURN 1;
END
$$;
-- +goose StatementEnd
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_note ON inbox (note);

-- +goose Down
DROP TABLE notes;
`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 42 || m.Transaction {
		t.Errorf("version %d, transaction %v: want 42, false", m.Version, m.Transaction)
	}
	var lines []int
	for _, s := range m.Statements {
		lines = append(lines, s.Line)
	}
	if !slices.Equal(lines, []int{4, 7, 10, 16}) {
		t.Fatalf("statements at lines %v, want 4, 7, 10, 16:\n%+v", lines, m.Statements)
	}
	if got := m.ConcurrentIndexes(); !slices.Equal(got, []string{"notes_id", "inbox_note"}) {
		t.Errorf("concurrent indexes %v", got)
	}
	if !m.Statements[1].Locks[0].New || m.Statements[3].Locks[0].New {
		t.Errorf("notes is new to this migration, inbox is not: %+v %+v", m.Statements[1].Locks, m.Statements[3].Locks)
	}
	if m.Strongest() != ShareUpdateExclusive {
		t.Errorf("strongest %s, want the index on inbox's SHARE UPDATE EXCLUSIVE", m.Strongest())
	}
}

// Every statement of Sluice's migrations is read by a rule, except the
// procedural blocks, which are named here.
func TestEveryMigrationStatementIsRead(t *testing.T) {
	t.Parallel()
	ms, err := ReadFS(os.DirFS("../../../migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no migrations read")
	}
	var unread []string
	for _, m := range ms {
		for _, s := range m.Statements {
			if !s.Known {
				unread = append(unread, m.File+":"+s.Summary())
			}
		}
	}
	want := []string{"00009_lifecycle.sql:DO $$", "00016_dispatch_partitions.sql:DO $$", "00035_outbox_publication.sql:DO $$"}
	if !slices.Equal(unread, want) {
		t.Errorf("statements no rule reads: %v, want only the DO blocks %v", unread, want)
	}
}
