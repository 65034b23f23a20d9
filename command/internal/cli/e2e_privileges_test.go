package cli

// Each privilege a stage needs, taken away one at a time on a deployment
// with least privilege (a TLS Postgres of the test's own, one role per
// stage): the check the doctor runs says which, and the process refuses to
// start, or turns not ready, with the same words, within seconds. And the
// two ways TLS fails: a wrong CA and an expired certificate.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// roleDeployment is a test's own least-privilege deployment.
type roleDeployment struct {
	pg    *testenv.TLSPostgres
	db    *testenv.RoleDatabase
	super *pgxpool.Pool // to take privileges away, and to look
	key   string
	sfx   string // its topics' prefix and its slot
}

// newRoleDeployment is one running Sluice's built-in groups, whose
// tables its roles are granted.
func newRoleDeployment(t *testing.T) *roleDeployment {
	t.Helper()
	return newRoleDeploymentOf(t, builtintest.Tables())
}

// newRoleDeploymentOf is one whose roles are granted effects' tables.
func newRoleDeploymentOf(t *testing.T, effects pg.EffectTables) *roleDeployment {
	t.Helper()
	p, err := testenv.StartTLSPostgres(testenv.TLSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	db, err := p.NewRoleDatabase("priv", effects)
	if err != nil {
		t.Fatal(err)
	}
	super, err := pg.Connect(context.Background(), db.SuperURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(super.Close)
	key, _ := keyring.Generate()
	return &roleDeployment{pg: p, db: db, super: super, key: key, sfx: testenv.RandomSuffix()}
}

// exec runs a statement as the superuser (a DBA taking a privilege away).
func (d *roleDeployment) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := d.super.Exec(context.Background(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// config is a process running stage alone, connected as its role.
func (d *roleDeployment) config(stage pg.Stage) pipeline.Config {
	sfx := d.sfx
	cfg := pipeline.Config{
		DatabaseURL: d.db.URLs[stage], OwnerDatabaseURL: d.db.OwnerURL,
		Kafka: kafka.Config{Brokers: suite.brokers}, SecretKey: d.key, HTTPAddr: "127.0.0.1:0",
		Topics: envelope.Topics{Prefix: "priv" + sfx + ".sluice"}, TopicSpec: kafka.TopicSpec{Partitions: 1, Retention: time.Hour},
	}
	cfg.CDCConfig.Slot = "priv_" + sfx
	switch stage {
	case pg.StageIngest:
		cfg.Ingest = true
	case pg.StageRelay:
		cfg.CDC = true
	case pg.StageConsumers:
		cfg.Consume = true
	}
	return cfg
}

var quiet = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

// refused starts cfg, which must fail within seconds with every one of
// want among its words.
func refused(t *testing.T, cfg pipeline.Config, want ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	p, err := pipeline.Start(ctx, cfg, quiet)
	if err == nil {
		cancel()
		_ = p.Wait()
		t.Fatalf("started; want a refusal saying %q", want)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("refused after %s, want within seconds", took)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
}

// doctorSays is the line `sluice doctor` gives for check on cfg, which
// must say want; the process must then say the same.
func doctorSays(t *testing.T, cfg pipeline.Config, check, want string) string {
	t.Helper()
	findings, err := pipeline.Doctor(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		if f.Check.Name != check {
			continue
		}
		if f.Err == nil || !strings.Contains(f.Err.Error(), want) || !f.Refuse {
			t.Fatalf("doctor's %s: %v (refuses start: %v), want a refusal saying %q", check, f.Err, f.Refuse, want)
		}
		return f.Err.Error()
	}
	t.Fatalf("doctor has no check %s", check)
	return ""
}

func TestRelayWithoutReplicationRefusesToStartNamingIt(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	relay := d.db.Roles[pg.StageRelay]
	d.exec(t, "ALTER ROLE "+relay+" NOREPLICATION")
	line := doctorSays(t, d.config(pg.StageRelay), "replication", "role "+relay+" lacks the REPLICATION attribute (stage relay)")
	refused(t, d.config(pg.StageRelay), line)
}

func TestRelayWithoutThePublicationRefusesToStartNamingIt(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	d.exec(t, "DROP PUBLICATION "+pg.Publication)
	line := doctorSays(t, d.config(pg.StageRelay), "publication",
		"publication sluice_outbox does not exist (stage relay): run `sluice migrate` as the schema's owner")
	refused(t, d.config(pg.StageRelay), line)
}

// The owner stage: migrations alter the publication, so its owner must be
// the schema's; `sluice migrate` (and a process migrating at start) says
// who owns it and the statement that gives it back.
func TestMigrateByARoleNotOwningThePublicationIsRefusedNamingIt(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	other := d.db.Roles[pg.StageAdmin]
	d.exec(t, "ALTER PUBLICATION "+pg.Publication+" OWNER TO "+other)
	cfg := d.config(pg.StageIngest)
	cfg.Migrate = true // as sluice serve and ingest do by default, through the owner's connection
	line := doctorSays(t, cfg, "owner", "does not own publication sluice_outbox (stage owner; "+other+" owns it)")
	err := (&MigrateCmd{}).Run(context.Background(), &Globals{OwnerURL: d.db.OwnerURL}, quiet)
	if err == nil || !strings.Contains(err.Error(), line) {
		t.Errorf("sluice migrate: %v, want %q", err, line)
	}
	refused(t, cfg, line)
}

func TestLifecycleWithoutOwnershipRefusesToStartNamingIt(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	cfg := d.config(pg.StageIngest)
	cfg.OwnerDatabaseURL = "" // the manager would partition as the ingest role
	line := doctorSays(t, cfg, "partition_owner", "role "+d.db.Roles[pg.StageIngest]+" does not own inbox_payloads (stage lifecycle;")
	refused(t, cfg, line, "it cannot create partitions of it", "SLUICE_OWNER_DATABASE_URL")
}

// INSERT on the inbox: refused at start; revoked while running, ingest's
// readiness fails with the same words and the webhook is answered 503 (its
// provider retries); granted again, the retry is accepted and stored once.
func TestIngestWithoutInsertOnTheInboxRefusesToStartAndTurnsNotReady(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	ingest := d.db.Roles[pg.StageIngest]
	revoke, grant := "REVOKE INSERT ON inbox FROM "+ingest, "GRANT INSERT ON inbox TO "+ingest
	d.exec(t, revoke)
	line := doctorSays(t, d.config(pg.StageIngest), "privileges_ingest", "role "+ingest+" lacks INSERT on \"inbox\" (stage ingest): GRANT INSERT ON \"inbox\" TO \""+ingest+"\", or run `sluice migrate --grant ingest="+ingest+"`")
	refused(t, d.config(pg.StageIngest), line)

	d.exec(t, grant)
	ctx, cancel := context.WithCancel(context.Background())
	proc, err := pipeline.Start(ctx, d.config(pg.StageIngest), quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = proc.Wait() })
	base := "http://" + proc.Addr().String()
	ring, _ := keyring.Parse(d.key)
	f := newTenantIn(t, tenancy.Store{Pool: d.super, Ring: ring, Providers: kinds.Builtin()})
	body := invoicePaid("evt_priv_"+testenv.RandomSuffix(), "in_priv", f.customer, 1000)
	send := func() int {
		return postTo(t, base, f.sourceID, body, map[string]string{"Stripe-Signature": stripeSignature(f.secret, body, time.Now())})
	}

	d.exec(t, revoke)
	testenv.Eventually(t, 10*time.Second, "ingest not ready, naming the privilege", func() (bool, error) {
		code, text := readinessOf(t, base)
		return code == http.StatusServiceUnavailable && strings.Contains(text, line), nil
	})
	if code := send(); code != http.StatusServiceUnavailable {
		t.Errorf("a webhook without INSERT on the inbox: %d, want 503 (the provider retries)", code)
	}
	d.exec(t, grant)
	testenv.Eventually(t, 10*time.Second, "ingest ready again", func() (bool, error) {
		code, _ := readinessOf(t, base)
		return code == http.StatusOK, nil
	})
	if code := send(); code != http.StatusAccepted {
		t.Fatalf("the provider's retry: %d, want 202", code)
	}
	var n int
	if err := d.super.QueryRow(context.Background(), `SELECT count(*) FROM inbox WHERE tenant_id = $1`, f.tenantID).Scan(&n); err != nil || n != 1 {
		t.Errorf("inbox rows = %d (%v), want the one event", n, err)
	}
}

func readinessOf(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body struct {
		Failed map[string]string `json:"failed"`
	}
	_ = json.Unmarshal(b, &body)
	var lines []string
	for _, l := range body.Failed {
		lines = append(lines, l)
	}
	return resp.StatusCode, strings.Join(lines, "\n")
}

func TestPostgresWithAWrongCAFailsFastNamingIt(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	other, err := testenv.NewCAFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.config(pg.StageRelay) // the relay's replication connection reads the same URL
	cfg.DatabaseURL = d.pg.URL(d.db.Roles[pg.StageRelay], d.db.Name, other)
	cfg.OwnerDatabaseURL = ""
	refused(t, cfg, "the server's certificate is not signed by the CA of sslrootcert", "certificate signed by unknown authority")
}

func TestPostgresWithAnExpiredCertificateFailsFastNamingIt(t *testing.T) {
	t.Parallel()
	p, err := testenv.StartTLSPostgres(testenv.TLSOptions{Expired: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	key, _ := keyring.Generate()
	cfg := pipeline.Config{DatabaseURL: p.URL("postgres", "postgres", ""), SecretKey: key, HTTPAddr: "127.0.0.1:0", Ingest: true,
		Topics: envelope.Topics{Prefix: "expired.sluice"}}
	refused(t, cfg, "the server's certificate is expired or not yet valid: it ended", "certificate has expired")
}

// A runtime role never migrates, even with --migrate (the default): a
// schema older than its binary is refused with the command to run and as
// whom, and `sluice doctor` says the same.
func TestARuntimeRoleNeverMigratesAndRefusesAnOlderSchema(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	// As if the last migration had not run yet.
	d.exec(t, "DELETE FROM sluice_schema_migrations WHERE version_id = (SELECT max(version_id) FROM sluice_schema_migrations)")
	cfg := d.config(pg.StageConsumers)
	cfg.Migrate, cfg.OwnerDatabaseURL = true, ""
	line := doctorSays(t, cfg, "schema", "and this binary needs")
	refused(t, cfg, line, "run `sluice migrate` as the schema's owner")
}

// start runs cfg for the rest of the test.
func (d *roleDeployment) start(t *testing.T, cfg pipeline.Config) *pipeline.Process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	proc, err := pipeline.Start(ctx, cfg, quiet)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = proc.Wait() })
	return proc
}

// A consumer group whose grant is revoked while it runs retries the
// record, never dead-letters it: its process turns not ready naming the
// privilege and the group held up; granted again, it applies the record
// once and is ready again. Nothing stalls unseen and nothing is lost.
func TestConsumersLosingAGrantTurnNotReadyAndLoseNothing(t *testing.T) {
	t.Parallel()
	d := newRoleDeployment(t)
	t.Cleanup(func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
		if err == nil {
			_ = kafka.DeleteTopicsWithPrefix(context.Background(), kadm.NewClient(cl), "priv"+d.sfx+".")
			cl.Close()
		}
	})
	cfg := d.config(pg.StageConsumers)
	cfg.Consumer.Backoff = 20 * time.Millisecond
	consume := d.start(t, cfg)
	d.start(t, d.config(pg.StageRelay))
	ingest := d.start(t, d.config(pg.StageIngest))
	if err := waitForSlot(context.Background(), d.super, cfg.CDCConfig.Slot, time.Minute); err != nil {
		t.Fatal(err)
	}
	consumers := d.db.Roles[pg.StageConsumers]
	d.exec(t, "REVOKE INSERT ON credit_grants FROM "+consumers)

	ring, _ := keyring.Parse(d.key)
	f := newTenantIn(t, tenancy.Store{Pool: d.super, Ring: ring, Providers: kinds.Builtin()})
	body := invoicePaid("evt_grant_"+d.sfx, "in_grant_"+d.sfx, f.customer, 2000)
	if code := postTo(t, "http://"+ingest.Addr().String(), f.sourceID, body,
		map[string]string{"Stripe-Signature": stripeSignature(f.secret, body, time.Now())}); code != http.StatusAccepted {
		t.Fatalf("webhook: %d, want 202", code)
	}
	base := "http://" + consume.Addr().String()
	want := []string{`lacks INSERT on "credit_grants" (stage consumers)`, "the deployment is at fault", "permission denied for table credit_grants"}
	testenv.Eventually(t, time.Minute, "the consumers not ready, naming the privilege and the group held up", func() (bool, error) {
		code, text := readinessOf(t, base)
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false, fmt.Errorf("readiness %d: %s", code, text)
			}
		}
		return code == http.StatusServiceUnavailable, nil
	})
	d.exec(t, "GRANT INSERT ON credit_grants TO "+consumers)
	testenv.Eventually(t, time.Minute, "the grant applied once and the consumers ready again", func() (bool, error) {
		var grants, letters int
		if err := d.super.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM credit_grants WHERE tenant_id = $1),
			(SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $2)`, f.tenantID, f.tenantID).Scan(&grants, &letters); err != nil {
			return false, err
		}
		if letters != 0 {
			t.Fatalf("%d dead letters for a deployment fault", letters)
		}
		if code, text := readinessOf(t, base); grants != 1 || code != http.StatusOK {
			return false, fmt.Errorf("grants %d, readiness %d: %s", grants, code, text)
		}
		return true, nil
	})
}
