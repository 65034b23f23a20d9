package ingest_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/testenv"
)

// loadClient keeps connections alive, so a flood measures ingest rather
// than the kernel's port allocation.
var loadClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}

// sendSigned posts a Stripe-signed body with the load client and returns the
// status (0 when the request itself failed).
func (b *bundle) sendSigned(sourceID, secret string, body []byte) int {
	return b.sendSignedWith(loadClient, sourceID, secret, body)
}

func (b *bundle) sendSignedWith(client *http.Client, sourceID, secret string, body []byte) int {
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/ingest/"+sourceID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(signature.StripeHeader, signature.SignStripe(secret, body, time.Now()))
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// repeat runs fn over and over in n goroutines until stop is closed.
func repeat(n int, stop <-chan struct{}, fn func()) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				fn()
			}
		}()
	}
	return &wg
}

// Invariant 2 under group commit: the same deliveries sent many times at
// once share transactions with each other and still give one inbox row and
// one outbox row per event, and a 2xx to every request.
func TestConcurrentDuplicatesUnderLoadAreAcceptedOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{TenantRate: 1e6, Commit: ingest.CommitConfig{Committers: 4, MaxBatch: 64}})
	const events, copies = 25, 12
	var (
		wg       sync.WaitGroup
		accepted atomic.Int32
		dup      atomic.Int32
		other    atomic.Int32
	)
	for e := range events {
		body := paid(fmt.Sprintf("evt_dup%d", e), fmt.Sprintf("in_dup%d", e))
		for range copies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch b.sendSigned(b.sourceID, b.secret, body) {
				case http.StatusAccepted:
					accepted.Add(1)
				case http.StatusOK:
					dup.Add(1)
				default:
					other.Add(1)
				}
			}()
		}
	}
	wg.Wait()
	if accepted.Load() != events || dup.Load() != events*(copies-1) || other.Load() != 0 {
		t.Fatalf("accepted %d, duplicates %d, other %d; want %d, %d, 0", accepted.Load(), dup.Load(), other.Load(), events, events*(copies-1))
	}
	if n := b.inbox(t); n != events {
		t.Fatalf("inbox rows = %d, want %d", n, events)
	}
	if n := b.outbox(t); n != events {
		t.Fatalf("outbox rows = %d, want %d", n, events)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1`); n != events*copies {
		t.Fatalf("attempts = %d, want one per request (%d)", n, events*copies)
	}
}

// Invariant 1: with the database cut off mid-flight (through a proxy, the
// shared server keeps running) every answer is 2xx or 5xx, and every event
// that got a 2xx is in the inbox afterwards. Once the database is back,
// deliveries are accepted again.
func TestDatabaseCutOffGivesOnly5xxAndEvery2xxIsStored(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	proxied := *u
	proxied.Host = proxy.Addr()
	b := setupVia(t, ingest.Config{TenantRate: 1e6, Commit: ingest.CommitConfig{Timeout: 2 * time.Second}}, proxied.String())

	var (
		mu       sync.Mutex
		ok2xx    []string
		statuses = map[int]int{}
		seq      atomic.Int64
		stop     = make(chan struct{})
	)
	wg := repeat(8, stop, func() {
		id := fmt.Sprintf("evt_cut%d", seq.Add(1))
		status := b.sendSigned(b.sourceID, b.secret, paid(id, "in_"+id))
		mu.Lock()
		statuses[status]++
		if status/100 == 2 {
			ok2xx = append(ok2xx, id)
		}
		mu.Unlock()
	})
	count := func(class int) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for s, c := range statuses {
			if s/100 == class {
				n += c
			}
		}
		return n
	}
	testenv.Eventually(t, 20*time.Second, "deliveries accepted before the cut", func() (bool, error) { return count(2) >= 50, nil })
	proxy.Cut()
	before5xx := count(5)
	testenv.Eventually(t, 20*time.Second, "5xx answers while cut off", func() (bool, error) { return count(5) >= before5xx+30, nil })
	proxy.Restore()
	after := count(2)
	testenv.Eventually(t, 30*time.Second, "deliveries accepted again", func() (bool, error) { return count(2) >= after+50, nil })
	close(stop)
	wg.Wait()

	for s := range statuses {
		if s/100 != 2 && s/100 != 5 {
			t.Errorf("status %d answered %d times: only 2xx and 5xx are allowed", s, statuses[s])
		}
	}
	var missing int
	for _, id := range ok2xx {
		if b.countFor(t, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_id = $2`, b.sourceID, id) != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d events answered 2xx are not in the inbox", missing, len(ok2xx))
	}
	t.Logf("answers: %v", statuses)
}
