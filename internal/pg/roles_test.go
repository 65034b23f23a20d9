package pg_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Every table and sequence the stages are granted exists in the migrated
// schema: a migration renaming one fails here, not as a 42501 in
// production. A superuser holds everything, so the checks pass for it.
func TestStagePrivilegesNameWhatTheSchemaHas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := testenv.Require(t).NewDatabase(ctx, "roles")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for _, stage := range pg.RuntimeStages {
		if err := pg.CheckPrivileges(ctx, pool, stage); err != nil {
			t.Errorf("stage %s: %v", stage, err)
		}
	}
	if err := pg.CheckReplication(ctx, pool); err != nil {
		t.Errorf("a superuser: %v", err)
	}
	if err := pg.CheckOwner(ctx, pool, pg.Publication); err != nil {
		t.Errorf("a superuser owning the schema: %v", err)
	}
}

// The grants a DBA is given are the stages' privileges, one statement per
// table, the relay's REPLICATION among them; a role serving two stages
// gets both.
func TestGrantStatementsSayEachStagesPrivileges(t *testing.T) {
	t.Parallel()
	a, err := pg.ParseAssignment([]string{"ingest+admin=web", "relay=relay"})
	if err != nil {
		t.Fatal(err)
	}
	sql := strings.Join(pg.GrantStatements(a), "\n")
	for _, want := range []string{
		`GRANT SELECT, INSERT, UPDATE ON "inbox" TO "web";`,
		`GRANT USAGE ON SEQUENCE "inbox_id_seq" TO "web";`,
		`GRANT SELECT, INSERT ON "admin_audit" TO "web";`,
		`ALTER ROLE "relay" WITH REPLICATION;`,
		`GRANT SELECT, UPDATE, DELETE ON "outbox" TO "relay";`,
		`GRANT SELECT ON "sluice_schema_migrations" TO "relay";`,
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("grants lack %s:\n%s", want, sql)
		}
	}
	if strings.Contains(sql, `ON "inbox" TO "relay"`) {
		t.Errorf("the relay is granted the inbox:\n%s", sql)
	}
	for _, bad := range [][]string{{"owner=x"}, {"ingest"}, {"ingest=a", "ingest=b"}, {"nope=x"}, {}} {
		if _, err := pg.ParseAssignment(bad); err == nil {
			t.Errorf("--grant %q accepted", bad)
		}
	}
}
