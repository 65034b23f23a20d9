package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The admin API under Schemathesis (dev/schemathesis): every operation,
// every check, against the admin listener of a process running every
// stage on a database of its own, with an unscoped operate token and one
// tenant with one of everything. Schemathesis must report no server
// error, no status the document or dev/schemathesis/schemathesis.toml
// does not allow, no request violating the document accepted, and no
// answer violating it. SLUICE_SCHEMATHESIS names the st binary (make
// test installs it, see dev/schemathesis/run.sh); without it the test
// is skipped.
func TestAdminAPIUnderSchemathesis(t *testing.T) {
	st := os.Getenv("SLUICE_SCHEMATHESIS")
	if st == "" {
		t.Skip("SLUICE_SCHEMATHESIS names no Schemathesis (make test sets it)")
	}
	ctx := context.Background()
	services := testenv.Require(t)
	dbURL, pool := ownDatabase(t, "schemathesis")
	key := newKey(t)
	ring, err := keyring.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	suffix := testenv.RandomSuffix()
	cfg := pipeline.Config{DatabaseURL: dbURL, Kafka: kafka.Config{Brokers: services.Brokers}, SecretKey: key,
		HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Topics: envelope.Topics{Prefix: "st" + suffix + ".sluice"},
		TopicSpec: kafka.TopicSpec{Partitions: 1, Retention: time.Hour}, Ingest: true, CDC: true, Consume: true, Consumer: consumers.Config{Backoff: 20 * time.Millisecond},
		// The authentication run sends a request without a valid token for
		// each case: a budget it is paced below (authRate).
		AdminFailedAuthRate: 200, AdminFailedAuthBurst: 400}
	cfg.CDCConfig.Slot = "sluice_st_" + suffix
	// Endpoints' test events are sent (to whatever URL the run made up,
	// under the default address policy), and deliveries delivered.
	cfg.Deliver = true
	cfg.Delivery = delivery.Config{Client: egress.NewClient(egress.Config{ConnectTimeout: time.Second}), Timeout: 2 * time.Second}
	pctx, stop := context.WithCancel(ctx)
	p, err := pipeline.Start(pctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		_ = p.Wait()
		deleteTopics(cfg.Topics.Resource(""))
	})
	// Rows committed before the slot exists would never be streamed.
	if err := waitForSlot(ctx, pool, cfg.CDCConfig.Slot, time.Minute); err != nil {
		t.Fatal(err)
	}
	world := seedForSchemathesis(t, p.Addr().String(), tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}, cfg.Topics.Resource("credits"))
	_, token, err := admintoken.Store{Pool: pool}.Create(ctx, admintoken.New{Role: admintoken.RoleOperate, Name: "schemathesis"})
	if err != nil {
		t.Fatal(err)
	}
	// What the run may revoke: a token of its own, never the one it runs
	// with (it learns every token's id from the list).
	decoy, _, err := admintoken.Store{Pool: pool}.Create(ctx, admintoken.New{Role: admintoken.RoleRead, Name: "schemathesis decoy"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	reports := t.TempDir()
	if dir := os.Getenv("SLUICE_SCHEMATHESIS_REPORTS"); dir != "" {
		reports = dir
	}
	// The committed configuration, and the world's ids for Schemathesis to
	// use beside the ones it makes up.
	committed, err := os.ReadFile(filepath.Join(root, "dev/schemathesis/schemathesis.toml"))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "schemathesis.toml")
	if err := os.WriteFile(config, append(committed, world...), 0o600); err != nil {
		t.Fatal(err)
	}
	document := "http://" + p.AdminAddr().String() + "/admin/v1/openapi.json"
	for _, run := range []struct {
		name string
		args []string
	}{
		{"every check but authentication's", []string{"--exclude-checks", "ignored_auth,missing_required_header"}},
		// Each case sends up to two requests without a valid token, each
		// spending the address's budget of failed authentications (200/s,
		// burst 400 here): paced well below it (Schemathesis paces its
		// cases, not the requests its checks add, and in bursts).
		{"authentication", []string{"--checks", "ignored_auth,missing_required_header", "--phases", "fuzzing", "--max-examples", "2",
			"--rate-limit", "1200/m"}},
	} {
		args := append([]string{"--config-file", config, "run", document, "--report", "junit,har", "--output-sanitize", "false", "--report-dir", filepath.Join(reports, run.name)}, run.args...)
		cmd := exec.CommandContext(ctx, st, args...)
		cmd.Env = append(os.Environ(), "SLUICE_ADMIN_TOKEN="+token, "SLUICE_DECOY_TOKEN_ID="+decoy.ID)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.Dir = t.TempDir() // its cache of crashes, not in the tree
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Errorf("Schemathesis (%s) found the admin API at fault (%v, after %s): its report is above", run.name, err, time.Since(start).Round(time.Second))
			continue
		}
		t.Logf("Schemathesis (%s) passed in %s", run.name, time.Since(start).Round(time.Second))
	}
}

// seedForSchemathesis makes, through the running process, one of
// everything the operations name by id: a tenant with a Stripe source, a
// workspace and an API key; an event whose customer maps to no workspace
// (so a dead letter of group) and a conflicting delivery of it. It
// returns the configuration that hands their ids to Schemathesis.
func seedForSchemathesis(t *testing.T, addr string, store tenancy.Store, group string) []byte {
	t.Helper()
	ctx := context.Background()
	f := newTenantIn(t, store)
	keyID, _, err := store.CreateAPIKey(ctx, f.tenantID)
	if err != nil {
		t.Fatal(err)
	}
	post := func(body []byte) {
		t.Helper()
		if code := postTo(t, "http://"+addr, f.sourceID, body, map[string]string{"Stripe-Signature": stripeSignature(f.secret, body, time.Now())}); code >= 300 {
			t.Fatalf("seed webhook: %d", code)
		}
	}
	post(invoicePaid("evt_st", "in_st", "cus_unmapped", 100))
	post(invoicePaid("evt_st", "in_st_other", "cus_unmapped", 100)) // the same key, another object: a conflict
	var inboxID, letterID int64
	var conflictAt time.Time
	if err := store.Pool.QueryRow(ctx, `SELECT i.id, c.received_at FROM inbox i JOIN inbox_conflicts c ON c.inbox_id = i.id
		WHERE i.source_id = $1`, f.sourceID).Scan(&inboxID, &conflictAt); err != nil {
		t.Fatalf("the seeded event and its conflict: %v", err)
	}
	testenv.Eventually(t, time.Minute, "the seeded event's dead letter", func() (bool, error) {
		err := store.Pool.QueryRow(ctx, `SELECT id FROM dead_letters WHERE consumer_group = $1 LIMIT 1`, group).Scan(&letterID)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	})
	ids := map[string]any{"tenant_id": f.tenantID, "source_id": f.sourceID, "workspace_id": f.workspaceID, "key_id": keyID,
		"inbox_id": inboxID, "dead_letter_id": letterID, "conflict_id": operate.ConflictID(inboxID, conflictAt), "group": group}
	var b strings.Builder
	b.WriteString("\n# The world's ids (TestAdminAPIUnderSchemathesis), used beside made-up ones.\n[dictionaries]\n")
	names := slices.Sorted(maps.Keys(ids))
	for _, name := range names {
		v := ids[name]
		if _, ok := v.(string); ok {
			v = strconv.Quote(v.(string))
		}
		fmt.Fprintf(&b, "%s = { values = [%v] }\n", name, v)
	}
	b.WriteString("\n[parameters]\n")
	for _, name := range names {
		fmt.Fprintf(&b, "%q = { dictionary = %q, probability = 0.5 }\n", "path."+name, name)
	}
	return []byte(b.String())
}
