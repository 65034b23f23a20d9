package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/migrations"
)

// A database one release behind: `sluice migrate --plan` lists the newest
// migration, each statement with the lock it is estimated to take, and
// migrates nothing; `sluice migrate` applies it and says so; the plan is
// then empty and `sluice version` sees the database at the binary's schema.
func TestMigratePlanListsWhatIsPendingAndItsLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	newest := newestMigration(t)
	dbURL, pool := testenv.EmptyDatabase(t, "plan")
	if err := pg.Migrate(ctx, pool, allBut(t, newest), slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	env := append(slices.DeleteFunc(sluiceEnv(suite.topics), func(kv string) bool { return strings.HasPrefix(kv, "SLUICE_DATABASE_URL=") }),
		"SLUICE_DATABASE_URL="+dbURL)

	plan := planOf(t, env)
	if plan.DatabaseSchema == nil || *plan.DatabaseSchema >= newest || plan.Schema != newest || len(plan.Pending) != 1 || plan.Pending[0].Version != newest {
		t.Fatalf("plan %+v: want the database behind %d and %d alone pending", plan, newest, newest)
	}
	if !strings.Contains(plan.Estimate, "estimated") {
		t.Errorf("the plan does not say its locks are an estimate: %q", plan.Estimate)
	}
	for _, s := range plan.Pending[0].Statements {
		if s.Known && len(s.Locks) == 0 && s.Note == "" {
			t.Errorf("line %d (%s): read, but no lock and no word on what it takes", s.Line, s.SQL)
		}
		for _, l := range s.Locks {
			if l.Mode == "" || l.Table == "" || l.Blocks == "" {
				t.Errorf("line %d: lock %+v lacks its mode, table or what it blocks", s.Line, l)
			}
		}
	}
	if v, _ := pg.SchemaVersion(ctx, pool); v >= newest {
		t.Fatalf("--plan migrated: the schema is at %d", v)
	}
	stdout, stderr, code := cliWith(t, env, "--version")
	if code != 0 || !strings.Contains(stdout, "behind this binary") {
		t.Errorf("sluice --version on a database behind: exit %d, %s%s", code, stdout, stderr)
	}

	stdout, stderr, code = cliWith(t, env, "migrate", "-o", "json")
	if code != 0 {
		t.Fatalf("sluice migrate exited %d: %s", code, stderr)
	}
	var res migrateResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("sluice migrate -o json: %v\n%s", err, stdout)
	}
	if !slices.Equal(res.Applied, []int64{newest}) || res.To != newest {
		t.Errorf("sluice migrate = %+v, want %d applied", res, newest)
	}
	if plan := planOf(t, env); len(plan.Pending) != 0 || plan.DatabaseSchema == nil || *plan.DatabaseSchema != newest {
		t.Errorf("plan after migrating: %+v, want nothing pending at %d", plan, newest)
	}
}

func planOf(t *testing.T, env []string) migrationPlan {
	t.Helper()
	stdout, stderr, code := cliWith(t, env, "migrate", "--plan", "-o", "json")
	if code != 0 {
		t.Fatalf("sluice migrate --plan exited %d: %s", code, stderr)
	}
	var plan migrationPlan
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatalf("sluice migrate --plan -o json: %v\n%s", err, stdout)
	}
	return plan
}

// allBut is Sluice's migrations without version v.
func allBut(t *testing.T, v int64) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if strings.HasPrefix(name, fmt.Sprintf("%05d_", v)) {
			continue
		}
		b, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = &fstest.MapFile{Data: b}
	}
	return out
}
