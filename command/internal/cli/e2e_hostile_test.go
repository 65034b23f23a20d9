package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/dev/procfs"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A key ring that cannot open the stored secrets would make every source
// answer 503 while the process looks healthy, and GitHub never redelivers:
// such a process refuses to start, and one that meets a secret sealed with
// a key it lacks stops being ready.
func TestKeyRingThatCannotOpenTheSecretsIsNeverReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "keyring")
	keyA, keyB, keyC := newKey(t), newKey(t), newKey(t)
	sealedWith := func(key string) string {
		ring, _ := keyring.Parse(key)
		store := tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
		tenant, err := store.CreateTenant(ctx, t.Name())
		if err != nil {
			t.Fatal(err)
		}
		src, err := store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Account: "acct_" + testenv.RandomSuffix(), Secret: "whsec_x"})
		if err != nil {
			t.Fatal(err)
		}
		var keyID string
		if err := pool.QueryRow(ctx, `SELECT key_id FROM source_secrets WHERE source_id = $1`, src).Scan(&keyID); err != nil {
			t.Fatal(err)
		}
		return keyID
	}
	idA := sealedWith(keyA)
	start := func(key string) (*pipeline.Process, func(), error) {
		return startIngest(t, pipeline.Config{DatabaseURL: dbURL, SecretKey: key})
	}

	_, _, err := start(keyB)
	var krErr *tenancy.KeyRingError
	if !errors.As(err, &krErr) || !slices.Equal(krErr.KeyIDs, []string{idA}) {
		t.Fatalf("start with the wrong key: %v, want a KeyRingError naming %s", err, idA)
	}
	// `sluice doctor` says it before a process is started, in the same words.
	env := func(key string) []string {
		return append(os.Environ(), "SLUICE_DATABASE_URL="+dbURL, "SLUICE_SECRET_KEY="+key, "SLUICE_LOG_LEVEL=warn")
	}
	checks, code := doctor(t, env(keyB), "--stage", "ingest")
	line, ok := checks.find("keyring")
	if code != 1 || !ok || line.OK || !line.Refuse || !strings.Contains(err.Error(), line.Error) {
		t.Fatalf("doctor with the wrong key: exit %d, %+v; want exit 1 and the keyring line the start refused with: %v", code, checks, err)
	}
	if checks, code := doctor(t, env(keyA), "--stage", "ingest"); code != 0 {
		t.Fatalf("doctor with the key that seals the secrets: exit %d, %+v", code, checks)
	}

	p, stop, err := start(keyB + "," + keyA) // rotating: B seals, A still opens
	if err != nil {
		t.Fatalf("start with the rotated ring: %v", err)
	}
	defer stop()
	readyz := func() (int, string) {
		resp, err := http.Get("http://" + p.Addr().String() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, body := readyz(); status != http.StatusOK {
		t.Fatalf("readyz with the rotated ring: %d %s", status, body)
	}
	idC := sealedWith(keyC) // an operator's CLI ran with another key
	if status, body := readyz(); status != http.StatusServiceUnavailable || !strings.Contains(body, idC) {
		t.Fatalf("readyz after a secret was sealed with a key the process lacks: %d %s, want 503 naming %s", status, body, idC)
	}

	// API credentials are sealed with the same ring and checked alike.
	if _, err := pool.Exec(ctx, `DELETE FROM source_secrets WHERE key_id = $1`, idC); err != nil {
		t.Fatal(err)
	}
	if status, body := readyz(); status != http.StatusOK {
		t.Fatalf("readyz once the foreign secret is gone: %d %s", status, body)
	}
	ringD, _ := keyring.Parse(newKey(t))
	var src string
	if err := pool.QueryRow(ctx, `SELECT source_id::text FROM source_secrets LIMIT 1`).Scan(&src); err != nil {
		t.Fatal(err)
	}
	if err := (tenancy.Store{Pool: pool, Ring: ringD, Providers: kinds.Builtin()}).SetAPICredentials(ctx, src, []byte(`{"secret_key":"rk_test_x"}`)); err != nil {
		t.Fatal(err)
	}
	var idD string
	if err := pool.QueryRow(ctx, `SELECT key_id FROM source_api_credentials WHERE source_id = $1`, src).Scan(&idD); err != nil {
		t.Fatal(err)
	}
	if status, body := readyz(); status != http.StatusServiceUnavailable || !strings.Contains(body, idD) {
		t.Fatalf("readyz after API credentials were sealed with a key the process lacks: %d %s, want 503 naming %s", status, body, idD)
	}
}

func newKey(t *testing.T) string {
	t.Helper()
	k, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// zeros is an endless body that costs the sender no memory.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// 40 senders who know a GitHub source's id but not its secret upload 25 MiB
// each, at once, half with a declared length and half chunked: the process
// stays far from its memory, and a signed delivery to another source is
// answered 202 meanwhile.
func TestUnauthenticatedFloodKeepsMemoryBoundedAndOthersServed(t *testing.T) {
	t.Parallel()
	const body = 25 << 20
	gh, err := suite.store.CreateSource(context.Background(), tenancy.NewSource{TenantID: newTenant(t).tenantID, Kind: "github", Account: "gh_" + testenv.RandomSuffix(), Secret: "gh-secret"})
	if err != nil {
		t.Fatal(err)
	}
	legit := newTenant(t)
	addr, pid := startIngestProc(t)

	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r io.Reader = io.LimitReader(zeros{}, body)
			if i%2 == 1 {
				r = io.MultiReader(r) // hides the length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/ingest/"+gh, r)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64))
			req.Header.Set("X-GitHub-Event", "push")
			req.Header.Set("X-GitHub-Delivery", fmt.Sprint(i))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	signed := invoicePaid("evt_"+testenv.RandomSuffix(), "in_flood", legit.customer, 100)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/ingest/"+legit.sourceID, bytes.NewReader(signed))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", stripeSignature(legit.secret, signed, time.Now()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	wg.Wait()

	if resp.StatusCode != http.StatusAccepted || legit.inboxRows(t) != 1 {
		t.Errorf("signed delivery during the flood: status %d, %d inbox rows; want 202 and 1", resp.StatusCode, legit.inboxRows(t))
	}
	if peak := procfs.PeakRSS(pid); peak == 0 || peak > 400<<20 {
		t.Errorf("peak RSS %d MiB, want under 400", peak>>20)
	} else {
		t.Logf("peak RSS %d MiB", peak>>20)
	}
}

// startIngestProc runs `sluice ingest` with its default limits on the
// suite's database and returns its address once it is ready, and its pid.
func startIngestProc(t *testing.T) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(sluiceBinary(t), "ingest", "--http-addr", addr, "--admin-addr", "127.0.0.1:0", "--no-migrate")
	// The suite's topic prefix: its relay publishes what this ingest
	// commits, with ACLs on that prefix alone.
	cmd.Env = append(sluiceEnv(suite.topics), "SLUICE_SECRET_KEY="+suite.secretKey)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("sluice ingest output:\n%s", out)
		}
	})
	testenv.Eventually(t, 30*time.Second, "sluice ingest to be ready", func() (bool, error) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	return addr, cmd.Process.Pid
}
