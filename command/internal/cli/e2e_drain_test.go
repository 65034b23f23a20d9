package cli

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// SIGTERM reaches an ingest process while a delivery is still arriving:
// the listener stops taking connections, the request already in hand is
// read to its end, committed and answered 202 (its commit waits for no
// new work to stop first), and the process then stops cleanly.
func TestStoppingIngestCommitsTheDeliveryStillArriving(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "drain")
	key := newKey(t)
	ring, err := keyring.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	pctx, stop := context.WithCancel(ctx) // stop is what SIGTERM does
	p, err := pipeline.Start(pctx, pipeline.Config{DatabaseURL: dbURL, SecretKey: key, HTTPAddr: "127.0.0.1:0",
		AdminAddr: "127.0.0.1:0", Ingest: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); _ = p.Wait() })
	f := newTenantIn(t, tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()})

	// Headers and half the body: the handler holds the body's bytes
	// (sluice_ingest_unverified_bytes) while it waits for the rest.
	body := invoicePaid("evt_drain", "in_drain", f.customer, 100)
	conn, err := net.Dial("tcp", p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /v1/ingest/%s HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\n"+
		"Stripe-Signature: %s\r\nContent-Length: %d\r\n\r\n", f.sourceID, stripeSignature(f.secret, body, time.Now()), len(body))
	half := len(body) / 2
	if _, err := conn.Write(append([]byte(head), body[:half]...)); err != nil {
		t.Fatal(err)
	}
	metrics := "http://" + p.AdminAddr().String() + "/metrics"
	testenv.Eventually(t, 10*time.Second, "the handler reading the body", func() (bool, error) {
		for line := range strings.Lines(get(t, metrics)) {
			if held, ok := strings.CutPrefix(line, "sluice_ingest_unverified_bytes "); ok {
				return strings.TrimSpace(held) != "0", nil
			}
		}
		return false, nil
	})

	stop()
	testenv.Eventually(t, 10*time.Second, "the listener refusing new connections", func() (bool, error) {
		c, err := net.DialTimeout("tcp", p.Addr().String(), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil, nil
	})
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the delivery arriving during the stop was answered %d, want 202", resp.StatusCode)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("the process stopped with: %v", err)
	}
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_id = 'evt_drain'`, f.sourceID).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Fatalf("%d inbox rows for the delivery answered 202, want 1", rows)
	}
}
