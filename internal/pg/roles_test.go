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
	pool := testenv.Pool(t, "roles")
	for _, stage := range pg.RuntimeStages {
		if err := pg.CheckPrivileges(ctx, pool, stage, pg.EffectTables{}); err != nil {
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
// gets both. The running effect groups' tables go to the consumers (and
// the admin listener, which runs their statements too), with USAGE on
// their own schema; those reconciliation reads, to ingest; none to the
// relay.
func TestGrantStatementsSayEachStagesPrivileges(t *testing.T) {
	t.Parallel()
	a, err := pg.ParseAssignment([]string{"ingest+admin=web", "relay=relay", "consumers=apply"})
	if err != nil {
		t.Fatal(err)
	}
	effects := pg.EffectTables{Written: []string{"shop.orders", "stock", "verifications"}, Read: []string{"verifications"}}
	sql := strings.Join(pg.GrantStatements(a, effects), "\n")
	for _, want := range []string{
		`GRANT SELECT, INSERT, UPDATE ON "inbox" TO "web";`,
		`GRANT USAGE ON SEQUENCE "inbox_id_seq" TO "web";`,
		`GRANT SELECT, INSERT ON "admin_audit" TO "web";`,
		`ALTER ROLE "relay" WITH REPLICATION;`,
		`GRANT SELECT, UPDATE, DELETE ON "outbox" TO "relay";`,
		`GRANT SELECT ON "sluice_schema_migrations" TO "relay";`,
		`GRANT USAGE ON SCHEMA "shop" TO "apply";`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON "shop"."orders" TO "apply";`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON "stock" TO "apply";`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON "shop"."orders" TO "web";`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON "verifications" TO "web";`,
	} {
		if !strings.Contains(sql, want) {
			t.Errorf("grants lack %s:\n%s", want, sql)
		}
	}
	for _, unwanted := range []string{`ON "inbox" TO "relay"`, `"stock" TO "relay"`, `SCHEMA "shop" TO "relay"`} {
		if strings.Contains(sql, unwanted) {
			t.Errorf("the relay is granted %s:\n%s", unwanted, sql)
		}
	}
	ingestOnly, _ := pg.ParseAssignment([]string{"ingest=in"})
	sql = strings.Join(pg.GrantStatements(ingestOnly, effects), "\n")
	if !strings.Contains(sql, `GRANT SELECT ON "verifications" TO "in";`) || strings.Contains(sql, `"stock"`) || strings.Contains(sql, `"shop"`) {
		t.Errorf("ingest: want SELECT on what reconciliation reads and nothing of the tables it does not:\n%s", sql)
	}
	for _, bad := range [][]string{{"owner=x"}, {"ingest"}, {"ingest=a", "ingest=b"}, {"nope=x"}, {}} {
		if _, err := pg.ParseAssignment(bad); err == nil {
			t.Errorf("--grant %q accepted", bad)
		}
	}
}

// A team's effect tables, in a schema of its own and in public, are
// granted to the consumers' role with USAGE on that schema; the check
// passes, and names each privilege taken away (the schema's USAGE, a
// table's DELETE) and a table the schema lacks, in the words the doctor
// prints.
func TestEffectTablesAreGrantedAndCheckedInTheirSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testenv.Pool(t, "effroles")
	role := "effroles_" + testenv.RandomSuffix()
	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`CREATE SCHEMA shop`)
	exec(`CREATE TABLE shop.orders (id text PRIMARY KEY)`)
	exec(`CREATE TABLE stock (sku text PRIMARY KEY)`)
	exec(`CREATE ROLE ` + role + ` NOLOGIN`)
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = pool.Exec(context.Background(), `DROP ROLE `+role)
	})
	effects := pg.EffectTables{Written: []string{"shop.orders", "stock"}}
	if err := pg.Grant(ctx, pool, pg.Assignment{pg.StageConsumers: role}, effects); err != nil {
		t.Fatal(err)
	}
	check := func(effects pg.EffectTables) error {
		t.Helper()
		conn, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Release()
		if _, err := conn.Exec(ctx, `SET ROLE `+role); err != nil {
			t.Fatal(err)
		}
		defer func() { _, _ = conn.Exec(ctx, `RESET ROLE`) }()
		return pg.CheckPrivileges(ctx, conn, pg.StageConsumers, effects)
	}
	if err := check(effects); err != nil {
		t.Fatalf("granted: %v", err)
	}
	exec(`REVOKE USAGE ON SCHEMA shop FROM ` + role)
	exec(`REVOKE DELETE ON stock FROM ` + role)
	err := check(pg.EffectTables{Written: []string{"shop.orders", "stock", "shop.returns"}})
	for _, want := range []string{
		`role ` + role + ` lacks USAGE on SCHEMA "shop" (stage consumers): GRANT USAGE ON SCHEMA "shop" TO "` + role + `", or run ` +
			"`sluice migrate --grant consumers=" + role + "`",
		`role ` + role + ` lacks DELETE on "stock" (stage consumers)`,
		`"shop"."returns" is missing (stage consumers)`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("check: %v\nwant it to say %s", err, want)
		}
	}
}
