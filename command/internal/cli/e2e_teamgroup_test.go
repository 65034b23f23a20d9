package cli

// A deployment running one effect group of a team's own and none of
// Sluice's built-in ones, each stage connected as a role of its own: what
// reads, grants, checks or erases effects follows the groups it runs, so
// nothing depends on a built-in group's table.

import (
	"context"
	"net/http"
	"testing"
	"testing/fstest"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// ledger is a team's group: one entry per paid invoice, in a schema of
// its own, with the record it was applied from.
func ledger() effect.Group {
	return effect.Group{Name: "ledger", Types: []string{"stripe.invoice.paid"},
		Handler: effect.Each(func(ctx context.Context, tx *effect.Tx, e effect.Event[struct{}]) error {
			_, err := effect.Once(ctx, tx, `INSERT INTO ledger.entries (business_key, tenant_id, event_id, inbox_id, kafka_topic, kafka_partition, kafka_offset)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (business_key) DO NOTHING`,
				e.BusinessKey(e.Subject, "entry"), e.TenantID, e.ID, e.InboxID, e.Topic, e.Partition, e.Offset)
			return err
		}),
		Tables: []string{"ledger.entries"},
		Trail: `SELECT 'ledger', 'entry', 'entry', business_key, event_id, inbox_id, '', 0, '', kafka_topic, kafka_partition, kafka_offset, processed_at
			FROM ledger.entries WHERE business_key = $1::text || '/' || $2 || '/' || $3 || '/entry'`,
		Erase: `DELETE FROM ledger.entries WHERE tenant_id = $1`,
	}
}

var ledgerSchema = fstest.MapFS{"00001_ledger.sql": {Data: []byte(`-- +goose Up
CREATE SCHEMA ledger;
CREATE TABLE ledger.entries (
    business_key    text PRIMARY KEY,
    tenant_id       uuid NOT NULL,
    event_id        text NOT NULL,
    inbox_id        bigint NOT NULL,
    kafka_topic     text NOT NULL,
    kafka_partition int NOT NULL,
    kafka_offset    bigint NOT NULL,
    processed_at    timestamptz NOT NULL DEFAULT now()
);
-- +goose Down
DROP SCHEMA ledger CASCADE;
`)}}

// `sluice migrate --grant` grants the team's tables (and its schema) and
// none of the built-in groups'; the doctor checks them and names one taken
// away; a paid invoice is the team's entry and no grant; the event's trail,
// read as the admin role, shows the entry; reconciliation, run as the
// ingest role, reads no built-in group's projection; erasing the tenant
// erases the entry.
func TestATeamsGroupAloneRunsWithLeastPrivilegeWithoutTheBuiltinGroups(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newRoleDeploymentOf(t, pg.EffectTables{}) // Sluice's own tables only
	t.Cleanup(func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
		if err == nil {
			_ = kafka.DeleteTopicsWithPrefix(context.Background(), kadm.NewClient(cl), "priv"+d.sfx+".")
			cl.Close()
		}
	})
	roles := d.db.Roles
	own := &App{Groups: []effect.Group{ledger()}, Migrations: ledgerSchema}
	g := &Globals{OwnerURL: d.db.OwnerURL, DatabaseURL: d.db.URLs[pg.StageIngest], SecretKey: d.key, EffectGroups: []string{"ledger"}, app: own}
	migrate := &MigrateCmd{Grant: []string{"ingest=" + roles[pg.StageIngest], "relay=" + roles[pg.StageRelay],
		"consumers=" + roles[pg.StageConsumers], "admin=" + roles[pg.StageAdmin]}, LockTimeout: 2 * time.Second, LockAttempts: 10}
	if err := migrate.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := migrate.Run(ctx, g, quiet); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stage     pg.Stage
		on, priv  string
		held      bool
		forSchema bool
	}{
		{pg.StageConsumers, "ledger", "USAGE", true, true},
		{pg.StageConsumers, "ledger.entries", "DELETE", true, false},
		{pg.StageAdmin, "ledger.entries", "SELECT", true, false},
		{pg.StageConsumers, "credit_grants", "SELECT", false, false},
		{pg.StageAdmin, "credit_grants", "SELECT", false, false},
		{pg.StageAdmin, "balances", "SELECT", true, false}, // a workspace's view shows its credits
		{pg.StageIngest, "verifications", "SELECT", false, false},
	} {
		query := `SELECT has_table_privilege($1, $2, $3)`
		if c.forSchema {
			query = `SELECT has_schema_privilege($1, $2, $3)`
		}
		var held bool
		if err := d.super.QueryRow(ctx, query, roles[c.stage], c.on, c.priv).Scan(&held); err != nil || held != c.held {
			t.Errorf("role of stage %s holds %s on %s: %v (%v), want %v", c.stage, c.priv, c.on, held, err, c.held)
		}
	}

	set, err := g.effects()
	if err != nil {
		t.Fatal(err)
	}
	config := func(stage pg.Stage) pipeline.Config {
		cfg := d.config(stage)
		cfg.Effects, cfg.Consumer.Backoff = set, 20*time.Millisecond
		return cfg
	}
	for _, stage := range []pg.Stage{pg.StageIngest, pg.StageConsumers} {
		findings, err := pipeline.Doctor(ctx, config(stage), quiet)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range findings {
			if f.Check.Name == "privileges_"+string(stage) && f.Err != nil {
				t.Errorf("doctor, stage %s: %v", stage, f.Err)
			}
		}
	}
	d.exec(t, "REVOKE DELETE ON ledger.entries FROM "+roles[pg.StageConsumers])
	doctorSays(t, config(pg.StageConsumers), "privileges_consumers", `lacks DELETE on "ledger"."entries" (stage consumers)`)
	d.exec(t, "GRANT DELETE ON ledger.entries TO "+roles[pg.StageConsumers])

	d.start(t, config(pg.StageConsumers))
	d.start(t, config(pg.StageRelay))
	ingest := d.start(t, config(pg.StageIngest))
	if err := waitForSlot(ctx, d.super, d.config(pg.StageRelay).CDCConfig.Slot, time.Minute); err != nil {
		t.Fatal(err)
	}
	ring, _ := keyring.Parse(d.key)
	store := tenancy.Store{Pool: d.super, Ring: ring, Providers: kinds.Builtin()}
	f := newTenantIn(t, store)
	body := invoicePaid("evt_ledger_"+d.sfx, "in_ledger_"+d.sfx, f.customer, 2000)
	if code := postTo(t, "http://"+ingest.Addr().String(), f.sourceID, body,
		map[string]string{"Stripe-Signature": stripeSignature(f.secret, body, time.Now())}); code != http.StatusAccepted {
		t.Fatalf("webhook: %d, want 202", code)
	}
	var inboxID int64
	testenv.Eventually(t, time.Minute, "the team's entry", func() (bool, error) {
		err := d.super.QueryRow(ctx, `SELECT inbox_id FROM ledger.entries WHERE tenant_id = $1`, f.tenantID).Scan(&inboxID)
		return err == nil, nil
	})
	var grants int
	if err := d.super.QueryRow(ctx, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.tenantID).Scan(&grants); err != nil || grants != 0 {
		t.Errorf("credit grants %d (%v): the credits group does not run here", grants, err)
	}

	admin, err := pg.Connect(ctx, d.db.URLs[pg.StageAdmin], 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	if _, err := (tenancy.Store{Pool: admin}).Workspace(ctx, f.workspaceID); err != nil {
		t.Errorf("the workspace, read as the admin role: %v", err)
	}
	trail, err := operate.New(admin, nil, operate.Config{Topics: d.config(pg.StageAdmin).Topics, Trails: set.Trails()}).Trail(ctx, nil, inboxID)
	if err != nil {
		t.Fatal(err)
	}
	if len(trail.Effects) != 1 || trail.Effects[0].Kind != "entry" || !trail.Effects[0].ThisEvent || trail.Effects[0].Applied.Offset == nil ||
		trail.Effects[0].ProcessedAt == nil {
		t.Errorf("trail's effects %+v, want the team's entry, caused by this event, with its record", trail.Effects)
	}

	stripe := stripetest.New(t)
	if err := store.SetAPICredentials(ctx, f.sourceID, []byte(`{"secret_key":"rk_test_123","api_base":"`+stripe.URL+`"}`)); err != nil {
		t.Fatal(err)
	}
	runner, stop, err := newRunner(ctx, g, quiet, reconcile.Config{}.WithDefaults()) // as the ingest role
	if err != nil {
		t.Fatal(err)
	}
	rep, err := runner.Source(ctx, f.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)})
	stop()
	if err != nil || rep.Outcome != reconcile.OutcomeOK {
		t.Errorf("reconciliation as the ingest role: %s, %v; want a run reading no built-in group's table", rep.Outcome, err)
	}

	owner, err := pg.Connect(ctx, d.db.OwnerURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(owner.Close)
	erased, err := lifecycle.EraseTenant(ctx, owner, f.tenantID, set.Erasures())
	if err != nil || erased.Effects != 1 {
		t.Fatalf("erase tenant: %+v, %v; want its one entry", erased, err)
	}
	var left int
	if err := d.super.QueryRow(ctx, `SELECT count(*) FROM ledger.entries WHERE tenant_id = $1`, f.tenantID).Scan(&left); err != nil || left != 0 {
		t.Errorf("entries left after the erasure: %d (%v)", left, err)
	}
}
