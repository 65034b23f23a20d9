package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// serve started while Kafka is unreachable does not refuse to start: ingest
// (which needs only Postgres) accepts deliveries, /readyz names kafka and
// the topics as what is missing, and once Kafka answers the topics are
// created, the consumers start and the event accepted meanwhile flows to
// its effect. Kafka is cut off by a proxy, never stopped.
func TestServeWaitsForKafka(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	services := testenv.Require(t)
	db, err := services.NewDatabase(ctx, "kafkadown")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	proxy := testenv.NewProxy(t, services.Brokers[0])
	proxy.Cut()

	secretKey, _ := keyring.Generate()
	suffix := testenv.RandomSuffix()
	topics := envelope.Topics{Prefix: "kd" + suffix + ".sluice"}
	cfg := pipeline.Config{
		DatabaseURL: db.URL,
		// Every broker connection goes through the proxy, not only the
		// seed's: a cut stops the broker as the pipeline sees it.
		Kafka: kafka.Config{Brokers: []string{proxy.Addr()}, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, proxy.Addr())
		}},
		SecretKey: secretKey,
		HTTPAddr:  "127.0.0.1:0",
		AdminAddr: "127.0.0.1:0",
		Topics:    topics,
		TopicSpec: kafka.TopicSpec{Partitions: 1, Retention: time.Hour},
		Ingest:    true, CDC: true, Consume: true,
		Consumer:     consumers.Config{Backoff: 20 * time.Millisecond},
		KafkaBackoff: 100 * time.Millisecond,
	}
	cfg.CDCConfig.Slot = "sluice_kd_" + suffix
	runCtx, cancel := context.WithCancel(ctx)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	proc, err := pipeline.Start(runCtx, cfg, log)
	if err != nil {
		cancel()
		t.Fatalf("serve with Kafka unreachable refused to start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := proc.Wait(); err != nil {
			t.Errorf("pipeline stopped with: %v", err)
		}
		deleteTopics(topics.Resource(""))
	})
	baseURL := "http://" + proc.Addr().String()
	adminURL := "http://" + proc.AdminAddr().String()

	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ring, _ := keyring.Parse(secretKey)
	store := tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
	account, secret, customer := "acct_"+suffix, "whsec_"+suffix+suffix, "cus_"+suffix
	tenant, err := store.CreateTenant(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	source, err := store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Account: account, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	workspace, err := store.CreateWorkspace(ctx, tenant, customer, "ws")
	if err != nil {
		t.Fatal(err)
	}
	// The relay holds its slot with Kafka away, so what ingest commits
	// from now on waits in the slot.
	if err := waitForSlot(ctx, pool, cfg.CDCConfig.Slot, time.Minute); err != nil {
		t.Fatal(err)
	}

	body := invoicePaid("evt_"+suffix, "in_"+suffix, customer, 900)
	req, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/ingest/"+source, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", stripeSignature(secret, body, time.Now()))
	if status, _ := do(t, req); status != http.StatusAccepted {
		t.Fatalf("webhook with Kafka away: %d, want 202", status)
	}
	// A load balancer keeps ingest in rotation; the stages' view names Kafka.
	if status, ready := readyz(t, baseURL+"/readyz"); status != http.StatusOK {
		t.Fatalf("/readyz with Kafka away: %d %+v, want 200 (ingest can accept)", status, ready)
	}
	status, ready := readyz(t, adminURL+"/readyz")
	if status != http.StatusServiceUnavailable || ready.Failed["kafka"] == "" || ready.Failed["topics"] == "" {
		t.Fatalf("admin /readyz with Kafka away: %d %+v, want 503 naming kafka and topics", status, ready)
	}
	for _, ok := range []string{"postgres", "keyring"} {
		if msg, failed := ready.Failed[ok]; failed {
			t.Errorf("readyz with Kafka away names %s: %s", ok, msg)
		}
	}

	proxy.Restore()
	testenv.Eventually(t, 2*time.Minute, "the credit granted once Kafka is back", func() (bool, error) {
		b, err := store.Balance(ctx, workspace)
		return b == 100, err
	})
	if status, ready := readyz(t, adminURL+"/readyz"); status != http.StatusOK {
		t.Fatalf("admin /readyz with Kafka back: %d %+v", status, ready)
	}

	// The broker goes away under a running pipeline: the stages' view
	// says so within 5 s, ingest stays in rotation and keeps accepting,
	// and what it accepted meanwhile drains once the broker is back.
	proxy.Cut()
	testenv.Eventually(t, 5*time.Second, "admin /readyz naming kafka", func() (bool, error) {
		status, ready := readyz(t, adminURL+"/readyz")
		return status == http.StatusServiceUnavailable && ready.Failed["kafka"] != "", nil
	})
	if status, ready := readyz(t, baseURL+"/readyz"); status != http.StatusOK {
		t.Fatalf("public /readyz with the broker stopped: %d %+v, want 200", status, ready)
	}
	body = invoicePaid("evt_2"+suffix, "in_2"+suffix, customer, 900)
	req, _ = http.NewRequest(http.MethodPost, baseURL+"/v1/ingest/"+source, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", stripeSignature(secret, body, time.Now()))
	if status, _ := do(t, req); status != http.StatusAccepted {
		t.Fatalf("webhook with the broker stopped: %d, want 202", status)
	}
	proxy.Restore()
	testenv.Eventually(t, 2*time.Minute, "the second credit granted once the broker is back", func() (bool, error) {
		b, err := store.Balance(ctx, workspace)
		return b == 200, err
	})
	testenv.Eventually(t, 30*time.Second, "admin /readyz ready again", func() (bool, error) {
		status, _ := readyz(t, adminURL+"/readyz")
		return status == http.StatusOK, nil
	})
}

type readiness struct {
	Status string            `json:"status"`
	Failed map[string]string `json:"failed"`
}

func readyz(t *testing.T, url string) (int, readiness) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	status, body := do(t, req)
	var r readiness
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("readyz body %q: %v", body, err)
	}
	return status, r
}

func do(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}
