// The e2e tests hold the scenarios of DESIGN.md run end to end: signed HTTP
// requests into a real `sluice serve` pipeline (ingest, relay, consumers in
// one process) over a real Postgres and a real Kafka, with assertions on the
// database and on the topics, never on logs.
//
// One pipeline (one slot, one relay) serves every test in the package; tests
// isolate themselves with their own tenant, source, customer and event ids,
// and so run in parallel.

package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// suite is what every test shares. It is package state because TestMain
// builds it once for the whole package.
var suite struct {
	baseURL  string
	adminURL string
	pool     *pgxpool.Pool
	store    tenancy.Store
	topics   envelope.Topics
	brokers  []string
	group    string
	slot     string // the relay's replication slot
	// databaseURL and secretKey let tests run administration commands and
	// processes against the pipeline's database.
	databaseURL, secretKey string
	// roles is set when the pipeline runs as one process per stage, each
	// its own role over TLS (SLUICE_E2E_ROLES=1, e2e_roles_test.go).
	roles *rolesSuite
}

// loopback is where the tests' endpoints listen.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	services, err := testenv.Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	db, err := newSuiteDatabase(ctx, services)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: database:", err)
		return 1
	}
	defer db.Drop()

	secretKey, _ := keyring.Generate()
	suffix := testenv.RandomSuffix()
	topics := envelope.Topics{Prefix: "e2e" + suffix + ".sluice"}
	// The pipeline reaches Kafka as a production one does: SCRAM-SHA-512
	// over TLS as a user whose ACLs allow only its prefix's topics and
	// groups (kafka.Required). The tests' own clients use the same broker's
	// PLAINTEXT listener, a super user's.
	secured, err := testenv.FindSecureKafka()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: secured kafka:", err)
		return 1
	}
	// Tests whose own `sluice consume` runs under a prefix of its own
	// ("inv6...", "dk...") write their intents through this pipeline's
	// outbox, so its relay may write those topics too.
	acls := kafka.Required(topics.Prefix)
	for _, p := range []string{"inv6", "dk"} {
		acls = append(acls, kafka.ACL{Name: p, Prefixed: true, Op: kafka.Write}, kafka.ACL{Name: p, Prefixed: true, Op: kafka.Describe})
	}
	kafkaCfg, dropUser, err := secured.SASLUser(ctx, "e2e", acls)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: kafka user:", err)
		return 1
	}
	defer dropUser()
	cfg := pipeline.Config{
		DatabaseURL: db.URL,
		Kafka:       kafkaCfg,
		SecretKey:   secretKey,
		HTTPAddr:    "127.0.0.1:0",
		AdminAddr:   "127.0.0.1:0",
		Topics:      topics,
		TopicSpec:   kafka.TopicSpec{Partitions: 3, Retention: time.Hour},
		Ingest:      true, CDC: true, Consume: true,
		Consumer: consumers.Config{Backoff: 20 * time.Millisecond},
	}
	// A service that acknowledges every intent: the dispatcher runs as it
	// does in production, so its metrics are on /metrics too.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusAccepted) }))
	defer sink.Close()
	cfg.Dispatch = dispatch.Config{URL: sink.URL, Secret: dispatchSecret}
	// Tenants' endpoints in the tests are local servers.
	cfg.Deliver = true
	cfg.EndpointsRefresh = time.Nanosecond // each batch sees the endpoints a test just made
	cfg.Delivery = delivery.Config{
		Client:      egress.NewClient(egress.Config{Policy: egress.Policy{Allow: loopback}}),
		BackoffBase: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		Cooldown: 100 * time.Millisecond, MaxCooldown: time.Second, Refresh: 50 * time.Millisecond,
	}
	// Endpoints made through the admin API (the clients' tests) are local
	// servers too.
	cfg.EndpointLimits.AllowHTTP = true
	cfg.EndpointURLCheck = func(raw string) error {
		_, err := egress.Policy{Allow: loopback}.CheckURL(raw, true)
		return err
	}
	cfg.CDCConfig.Slot = "sluice_e2e_" + suffix
	cfg.CDCConfig.HeartbeatInterval = time.Second
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	proc, err := startSuite(ctx, cfg, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start pipeline:", err)
		return 1
	}

	pool, err := pg.Connect(ctx, db.URL, 8)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer pool.Close()
	ring, _ := keyring.Parse(secretKey)
	suite.baseURL = "http://" + proc.Addr().String()
	suite.adminURL = "http://" + proc.AdminAddr().String()
	if suite.roles != nil {
		suite.adminURL = "http://" + suite.roles.consume.AdminAddr().String()
	}
	suite.pool = pool
	suite.store = tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
	suite.topics = topics
	suite.brokers = secured.Plain
	suite.group = topics.Resource("credits")
	suite.slot = cfg.CDCConfig.Slot
	suite.databaseURL, suite.secretKey = db.URL, secretKey

	// Rows committed before the slot exists would never be streamed: wait
	// for the relay to hold its slot before any test sends a webhook.
	if err := waitForSlot(ctx, pool, cfg.CDCConfig.Slot, time.Minute); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()
	if cliBinary.dir != "" {
		_ = os.RemoveAll(cliBinary.dir)
	}
	cancel()
	if err := errors.Join(proc.Wait(), suite.roles.wait()); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: pipeline stopped with:", err)
		if code == 0 {
			code = 1
		}
	}
	deleteTopics(topics.Resource(""))
	return code
}

func waitForSlot(ctx context.Context, pool *pgxpool.Pool, slot string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		// A slot is active while it is still being created; the relay records
		// it in cdc_slots once it reached its consistent point and streams.
		var ready bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cdc_slots c JOIN pg_replication_slots s
			ON s.slot_name = c.slot WHERE c.slot = $1 AND s.active)`, slot).Scan(&ready)
		if err == nil && ready {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("relay did not open slot %s within %s", slot, timeout)
}

// kafkaClient reads topics directly, outside any group, for assertions.
func kafkaClient(t *testing.T, topics ...string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...), kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// deleteTopics removes the suite's topics from the shared broker.
func deleteTopics(prefix string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		return
	}
	defer cl.Close()
	_ = kafka.DeleteTopicsWithPrefix(context.Background(), kadm.NewClient(cl), prefix)
}
