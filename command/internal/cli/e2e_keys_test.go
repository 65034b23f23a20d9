package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/keyring/sealed"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// keysCLI runs the sluice binary on a database of the test's own, its key
// ring given as a file (SLUICE_SECRET_KEY_FILE), as a container would.
func keysCLI(t *testing.T, dbURL, ring string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	keyFile := filepath.Join(t.TempDir(), "secret-key")
	if err := os.WriteFile(keyFile, []byte(ring+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") {
			env = append(env, kv)
		}
	}
	env = append(env, "SLUICE_DATABASE_URL="+dbURL, "SLUICE_SECRET_KEY_FILE="+keyFile, "SLUICE_LOG_LEVEL=warn")
	return cliWith(t, env, args...)
}

// keyStatus is `sluice keys status -o json`: secrets by key id.
func keyStatus(t *testing.T, dbURL, ring string) map[string]int {
	t.Helper()
	stdout, stderr, code := keysCLI(t, dbURL, ring, "keys", "status", "-o", "json")
	if code != 0 {
		t.Fatalf("keys status exited %d: %s", code, stderr)
	}
	var status struct {
		Keys []keyUsage `json:"items"`
	}
	if err := json.Unmarshal([]byte(stdout), &status); err != nil {
		t.Fatalf("keys status printed %q: %v", stdout, err)
	}
	by := map[string]int{}
	for _, k := range status.Keys {
		by[k.ID] = k.Secrets
	}
	return by
}

// ingestWith starts an ingest process on dbURL with the key ring, reading
// sources from the database on every request (no cache), so requests read
// the rows a rotation is changing.
func ingestWith(t *testing.T, dbURL, ring string) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	cfg := pipeline.Config{DatabaseURL: dbURL, SecretKey: ring, HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Ingest: true}
	cfg.IngestConfig.SourceCacheTTL = time.Nanosecond
	cfg.IngestConfig.TenantRate, cfg.IngestConfig.TenantBurst = 1e6, 1e6
	p, err := pipeline.Start(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); _ = p.Wait() })
	return "http://" + p.Addr().String()
}

// load sends signed invoice.paid deliveries to the fixtures' sources,
// round robin from several senders, until stopped; it counts what was
// accepted and keeps every other answer.
type load struct {
	accepted atomic.Int64
	mu       sync.Mutex
	refused  []string
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func startLoad(t *testing.T, baseURL string, fixtures []tenantFixture) *load {
	t.Helper()
	l := &load{stop: make(chan struct{})}
	t.Cleanup(func() { l.end() })
	client := &http.Client{Timeout: 10 * time.Second}
	for sender := range 4 {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				f := fixtures[(sender+4*i)%len(fixtures)]
				body := invoicePaid(fmt.Sprintf("evt_rot_%d_%d", sender, i), fmt.Sprintf("in_rot_%d_%d", sender, i), f.customer, 100)
				req, _ := http.NewRequest(http.MethodPost, baseURL+"/v1/ingest/"+f.sourceID, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Stripe-Signature", stripeSignature(f.secret, body, time.Now()))
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
				}
				switch {
				case err != nil:
					l.refuse(err.Error())
				case resp.StatusCode/100 == 2:
					l.accepted.Add(1)
				default:
					l.refuse(fmt.Sprintf("source %s: %d", f.sourceID, resp.StatusCode))
				}
			}
		}()
	}
	return l
}

func (l *load) refuse(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refused = append(l.refused, what)
}

// waitFor waits until n more deliveries were accepted, and fails the test
// on the first refused.
func (l *load) waitFor(t *testing.T, n int64) {
	t.Helper()
	target := l.accepted.Load() + n
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d more deliveries accepted", n), func() (bool, error) {
		return l.accepted.Load() >= target || len(l.refusals()) > 0, nil
	})
	if refused := l.refusals(); len(refused) > 0 {
		t.Fatalf("%d deliveries refused, the first: %s", len(refused), refused[0])
	}
}

func (l *load) refusals() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.refused)
}

// end stops the senders and returns the answers that were no 2xx.
func (l *load) end() []string {
	l.stopOnce.Do(func() { close(l.stop) })
	l.wg.Wait()
	return l.refusals()
}

// sealedByKey counts every stored secret by key id, from the database.
func sealedByKey(t *testing.T, pool *pgxpool.Pool) map[string]int {
	t.Helper()
	by := map[string]int{}
	for _, col := range sealedColumns() {
		counts, err := sealed.Count(context.Background(), pool, col)
		if err != nil {
			t.Fatal(err)
		}
		for id, n := range counts {
			by[id] += n
		}
	}
	return by
}

// The key ring is rotated under load: while webhooks signed with the
// sources' secrets keep arriving at an ingest process holding both keys
// (new first), `sluice keys rotate` re-seals every stored secret with the
// new key. No delivery is refused before, during or after it; afterwards
// every secret is sealed by the new key (keys status says so), and an
// ingest process started with the new key alone accepts every source's
// deliveries.
func TestKeysRotateUnderLoadRefusesNoDelivery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "keys")
	oldRing, newRing := "old:"+newKey(t), "new:"+newKey(t)
	both := newRing + "," + oldRing
	old, err := keyring.Parse(oldRing)
	if err != nil {
		t.Fatal(err)
	}
	// Every kind of sealed value, sealed by the old key: 40 sources' secrets,
	// API credentials, an endpoint's secret and headers.
	store := tenancy.Store{Pool: pool, Ring: old, Providers: kinds.Builtin()}
	var fixtures []tenantFixture
	for range 40 {
		fixtures = append(fixtures, newTenantIn(t, store))
	}
	if err := store.SetAPICredentials(ctx, fixtures[0].sourceID, []byte(`{"secret_key":"rk_test_rotation"}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := (endpoints.Store{Pool: pool, Ring: old}).CreateEndpoint(ctx, endpoints.New{TenantID: fixtures[0].tenantID,
		URL: "https://receiver.example/hooks", Filters: []string{"*"}, Headers: map[string]string{"Authorization": "Bearer x"}}); err != nil {
		t.Fatal(err)
	}
	if got := sealedByKey(t, pool); fmt.Sprint(got) != "map[old:43]" {
		t.Fatalf("sealed before the rotation: %v, want old 43", got)
	}

	l := startLoad(t, ingestWith(t, dbURL, both), fixtures)
	l.waitFor(t, 100)
	before := l.accepted.Load()
	stdout, stderr, code := keysCLI(t, dbURL, both, "keys", "rotate", "--batch-size", "1", "-o", "json")
	during := l.accepted.Load() - before
	l.waitFor(t, 100)
	if refused := l.end(); len(refused) > 0 {
		t.Fatalf("%d deliveries refused around the rotation, the first: %v", len(refused), refused[0])
	}
	if code != 0 {
		t.Fatalf("keys rotate exited %d: %s%s", code, stdout, stderr)
	}
	var rotated rotation
	if err := json.Unmarshal([]byte(stdout), &rotated); err != nil {
		t.Fatalf("keys rotate printed %q: %v", stdout, err)
	}
	resealed := map[string]int{}
	for _, k := range rotated.Kinds {
		resealed[k.Kind] = k.Resealed
		if len(k.Remaining) > 0 {
			t.Errorf("%s left: %v", k.Kind, k.Remaining)
		}
	}
	if rotated.Primary != "new" || fmt.Sprint(resealed) != "map[endpoint headers:1 endpoint secrets:1 source API credentials:1 source secrets:40]" {
		t.Fatalf("keys rotate: first key %s, re-sealed %v; want new, and every value", rotated.Primary, resealed)
	}
	t.Logf("%d deliveries accepted while keys rotate ran (%d in all)", during, l.accepted.Load())
	if during == 0 {
		t.Error("no delivery was accepted while keys rotate ran: the load did not overlap the rotation")
	}
	if got := keyStatus(t, dbURL, both); fmt.Sprint(got) != "map[new:43 old:0]" {
		t.Fatalf("keys status after the rotation: %v, want new 43 and old 0", got)
	}

	// The old key dropped: a process with the new key alone starts (its
	// key ring check opens every key id in use) and accepts every source.
	onlyNew := ingestWith(t, dbURL, newRing)
	for i, f := range fixtures {
		body := invoicePaid(fmt.Sprintf("evt_after_%d", i), fmt.Sprintf("in_after_%d", i), f.customer, 100)
		req, _ := http.NewRequest(http.MethodPost, onlyNew+"/v1/ingest/"+f.sourceID, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Stripe-Signature", stripeSignature(f.secret, body, time.Now()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("source %d answered %d to the process holding the new key alone, want 202", i, resp.StatusCode)
		}
	}
	var inbox int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM inbox`).Scan(&inbox); err != nil {
		t.Fatal(err)
	}
	if want := l.accepted.Load() + int64(len(fixtures)); inbox != want {
		t.Fatalf("%d inbox rows, want %d: one per accepted delivery", inbox, want)
	}
}

// A rotation whose ring lacks a key some secrets were sealed with re-seals
// the others, names the missing key id and exits 1, as -o json too; the
// audit trail holds its batches.
func TestKeysRotateNamesTheKeysTheRingLacks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "keyslack")
	lostRing, oldRing, newRing := "lost:"+newKey(t), "old:"+newKey(t), "new:"+newKey(t)
	for _, spec := range []string{lostRing, oldRing, oldRing} {
		r, err := keyring.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		newTenantIn(t, tenancy.Store{Pool: pool, Ring: r, Providers: kinds.Builtin()})
	}
	stdout, stderr, code := keysCLI(t, dbURL, newRing+","+oldRing, "keys", "rotate")
	if code != 1 || !strings.Contains(stderr, "sealed by key id(s) lost") || !strings.Contains(stdout, "source secrets: 2 re-sealed, left: lost 1 (cannot open)") {
		t.Fatalf("keys rotate with a key missing: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = keysCLI(t, dbURL, newRing+","+oldRing, "keys", "rotate", "-o", "json")
	var refusal struct {
		Error struct {
			Message string          `json:"message"`
			Kinds   []sealed.Result `json:"kinds"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &refusal); err != nil || code != 1 || len(refusal.Error.Kinds) == 0 ||
		fmt.Sprint(refusal.Error.Kinds[0].Unopenable) != "[lost]" {
		t.Fatalf("keys rotate -o json with a key missing: exit %d, %q (%v)", code, stdout, err)
	}
	if got := keyStatus(t, dbURL, newRing+","+oldRing); fmt.Sprint(got) != "map[lost:1 new:2 old:0]" {
		t.Fatalf("keys status: %v, want lost 1, new 2, old 0", got)
	}
	var audited int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM admin_audit WHERE action = 'keys.rotate' AND resource = 'source_secret' AND target_id = 'new' AND token_id IS NULL`).Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if audited != 1 {
		t.Fatalf("%d audit rows of the rotation, want 1 (one batch)", audited)
	}
}
