package effects_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/command/internal/effects"
	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The built-in groups name the tables their effects live in (the consumers
// write them, reconciliation reads the projections it looks up), the
// queries an event's trail shows and the statements a tenant's erasure
// runs; against the migrated schema, each table exists, each trail query
// takes the four parameters and returns the thirteen columns, and each
// erasure runs.
func TestBuiltinGroupsDeclareTheirTablesTrailsAndErasures(t *testing.T) {
	t.Parallel()
	set := effects.Default()
	tables := set.Tables()
	if got, want := slices.Sorted(slices.Values(tables.Written)), []string{"balances", "credit_grants", "credit_reversals", "feedback_alerts",
		"github_installations", "subscriptions", "verifications"}; !slices.Equal(got, want) {
		t.Errorf("written tables %v, want %v", got, want)
	}
	if got, want := slices.Sorted(slices.Values(tables.Read)), []string{"feedback_alerts", "github_installations", "verifications"}; !slices.Equal(got, want) {
		t.Errorf("tables reconciliation reads %v, want %v", got, want)
	}
	if n := len(set.Trails()); n != 5 {
		t.Errorf("%d trail queries, want one per built-in group", n)
	}

	ctx := context.Background()
	pool := testenv.Pool(t, "effects")
	for _, stage := range []pg.Stage{pg.StageConsumers, pg.StageIngest} {
		if err := pg.CheckPrivileges(ctx, pool, stage, tables); err != nil {
			t.Errorf("stage %s: %v", stage, err)
		}
	}
	// Rolled back: the erasures delete nothing of anyone.
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for i, q := range set.Trails() {
			if _, err := tx.Exec(ctx, `PREPARE trail`+string(rune('a'+i))+` (uuid, text, text, uuid) AS SELECT * FROM (`+q+`
				) AS e (grp, kind, operation, business_key, event_id, inbox_id, workspace_id, credits, state, kafka_topic, kafka_partition, kafka_offset, processed_at)`); err != nil {
				t.Errorf("trail %s: %v", q, err)
			}
		}
		for _, q := range set.Erasures() {
			if _, err := tx.Exec(ctx, q, uuid.NewString()); err != nil {
				t.Errorf("erasure %s: %v", q, err)
			}
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatal(err)
	}
}

var errRollback = errors.New("rolled back")

// The deployment's choice decides what is read and granted: the trails and
// the tables of the groups it runs only; a tenant's erasure runs every
// group's statement, run or not (what a group wrote stays in its tables).
func TestTheRunningGroupsDecideTrailsAndGrantsAndEveryGroupErases(t *testing.T) {
	t.Parallel()
	orders := effect.Group{Name: "orders", Types: []string{"hmac.order.*"}, Handler: effect.Each(noop),
		Tables: []string{"shop.orders", "stock"}, Trail: "SELECT 'orders trail'", Erase: "DELETE FROM shop.orders WHERE tenant_id = $1"}
	set, err := effects.NewSet(append(effects.Builtin(), orders), []string{"orders"})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.RunningNames(); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("running %v, want orders", got)
	}
	if got := set.Trails(); !slices.Equal(got, []string{orders.Trail}) {
		t.Errorf("trails %q, want the orders group's alone", got)
	}
	if got := set.Tables(); !slices.Equal(got.Written, orders.Tables) || len(got.Read) != 0 {
		t.Errorf("tables %+v, want the orders group's written and none read", got)
	}
	if got := set.Erasures(); len(got) != 6 || got[5] != orders.Erase {
		t.Errorf("erasures %q, want the five built-in groups' and the orders group's", got)
	}
	both, err := effects.NewSet(append(effects.Builtin(), orders), []string{"orders", "verifications"})
	if err != nil {
		t.Fatal(err)
	}
	if got := both.Tables(); !slices.Equal(got.Read, []string{"verifications"}) {
		t.Errorf("running verifications: reconciliation reads %v, want its table", got.Read)
	}

	for _, bad := range []string{"Orders", "shop.orders.lines", "1orders", "shop.", "orders;drop"} {
		g := orders
		g.Tables = []string{bad}
		if _, err := effects.NewSet([]effect.Group{g}, nil); err == nil || !strings.Contains(err.Error(), "table") {
			t.Errorf("table %q: %v, want it refused", bad, err)
		}
	}
}

func noop(context.Context, *effect.Tx, effect.Event[struct{}]) error { return nil }
