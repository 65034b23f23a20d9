package dispatch_test

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	svix "github.com/svix/svix-webhooks/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/consumers/consumertest"
	"github.com/sluicehq/sluice/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

// secret is the destination's Standard Webhooks secret in these tests.
const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// service is a fake e-mail API that deduplicates on Idempotency-Key, like
// the services the dispatcher's policy relies on. behave decides, per
// request of a key (1-based), what happens before deduplication.
type service struct {
	mu       sync.Mutex
	requests map[string][]time.Time // by key
	sent     map[string]int         // e-mails actually sent, by key
	behave   func(w http.ResponseWriter, key string, n int) bool
}

func newService(t *testing.T, behave func(w http.ResponseWriter, key string, n int) bool) (*service, string) {
	s := &service{requests: map[string][]time.Time{}, sent: map[string]int{}, behave: behave}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(dispatch.HeaderIdempotencyKey)
		s.mu.Lock()
		s.requests[key] = append(s.requests[key], time.Now())
		n := len(s.requests[key])
		s.mu.Unlock()
		if s.behave != nil && !s.behave(w, key, n) {
			return
		}
		s.mu.Lock()
		if s.sent[key] == 0 {
			s.sent[key]++ // a key already sent is acknowledged, not sent again
		}
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *service) counts(key string) (requests, sent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests[key]), s.sent[key]
}

func intents(f consumertest.Fixture, topic string, n int) ([]*kgo.Record, []string) {
	var recs []*kgo.Record
	var keys []string
	for i := range n {
		key := fmt.Sprintf("%s/%s/in_%d/initial-credit-grant/confirmation-email", f.SourceID, f.Account, i)
		ev := f.Event(key, "sluice.email.credits_granted", "workspace", f.WorkspaceID, time.Now())
		recs = append(recs, consumertest.Record(topic, ev, fmt.Appendf(nil, `{"kind":"credits-granted","idempotency_key":%q}`, key)))
		keys = append(keys, key)
	}
	return recs, keys
}

// The invariants every handler keeps, for the dispatcher: an intent is
// sent once and logged once after the service's 2xx, whatever the number of
// deliveries, rewinds and transient failures; a refusal is dead-lettered.
func TestConformance(t *testing.T) {
	t.Parallel()
	svc, url := newService(t, func(w http.ResponseWriter, key string, _ int) bool {
		if strings.Contains(key, "/refused/") {
			w.WriteHeader(http.StatusUnprocessableEntity)
			return false
		}
		return true
	})
	intent := func(f consumertest.Fixture, topic, key string) *kgo.Record {
		ev := f.Event(key, "sluice.email.credits_granted", "workspace", f.WorkspaceID, time.Now())
		return consumertest.Record(topic, ev, fmt.Appendf(nil, `{"kind":"credits-granted","idempotency_key":%q}`, key))
	}
	key := func(f consumertest.Fixture, invoiceID string) string {
		return fmt.Sprintf("%s/%s/%s/initial-credit-grant/confirmation-email", f.SourceID, f.Account, invoiceID)
	}
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "stripe", Topic: dispatch.Topic,
		Handler: func(env *consumertest.Env, _ envelope.Topics, group string) consumers.Handler {
			return dispatch.New(dispatch.Config{URL: url, Secret: secret, Timeout: 5 * time.Second}, env.Pool, group)
		},
		// Two copies in one batch are both prepared before either is logged:
		// the service sees the key twice and sends once, as the policy says.
		Histories: []consumertest.History{{Name: "an intent", Final: "1 sent, 1 logged",
			Events: func(f consumertest.Fixture, topic, invoiceID string) []*kgo.Record {
				return []*kgo.Record{intent(f, topic, key(f, invoiceID))}
			}}},
		State: func(tb testing.TB, env *consumertest.Env, f consumertest.Fixture, invoiceID string) string {
			k := key(f, invoiceID)
			_, sent := svc.counts(k)
			logged := env.Count(tb, `SELECT count(*) FROM dispatch_deliveries WHERE idempotency_key = $1 AND status = 202`, k)
			return fmt.Sprintf("%d sent, %d logged", sent, logged)
		},
		Poison: func(f consumertest.Fixture, topic, invoiceID string) *kgo.Record {
			return intent(f, topic, key(f, "refused/"+invoiceID))
		},
	})
}

// The written policy, exercised: the service accepts (sends the e-mail) but
// the answer is lost. The dispatcher cannot know, so it sends again with the
// same Idempotency-Key; the service acknowledges without sending twice; the
// send is logged once, after the 2xx. A rewind then calls nothing.
func TestLostResponseIsRetriedWithTheSameKeyAndLoggedOnce(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "notifications", 2)
	recs, keys := intents(f, topic, 5)
	lost := keys[2]
	svc, url := newService(t, nil)
	// The service sends the e-mail, then the answer is lost (the
	// connection closes before any response).
	svc.behave = func(w http.ResponseWriter, key string, n int) bool {
		if key == lost && n == 1 {
			svc.mu.Lock()
			svc.sent[key]++
			svc.mu.Unlock()
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return false
		}
		return true
	}
	env.Produce(t, recs...)
	cfg := consumers.Config{Topics: []string{topic}}
	cfg.Group = topic + ".dispatch"
	h := dispatch.New(dispatch.Config{URL: url, Secret: secret, Timeout: 5 * time.Second}, env.Pool, cfg.Group)
	g := env.Run(t, cfg, h, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	for _, key := range keys {
		requests, sent := svc.counts(key)
		if sent != 1 {
			t.Errorf("%s: sent %d e-mails, want 1", key, sent)
		}
		wantRequests := 1
		if key == lost {
			wantRequests = 2
		}
		if requests != wantRequests {
			t.Errorf("%s: %d requests, want %d", key, requests, wantRequests)
		}
		if n := env.Count(t, `SELECT count(*) FROM dispatch_deliveries WHERE idempotency_key = $1 AND status = 202`, key); n != 1 {
			t.Errorf("%s: %d dispatch log rows, want 1", key, n)
		}
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 0 {
		t.Errorf("dead letters = %d", n)
	}

	// A rewind (a new group reading from the start) finds every key logged.
	g.Stop(t)
	again := env.Run(t, consumers.Config{Topics: []string{topic}, Group: topic + ".dispatch.again"}, h, nil)
	env.WaitCommitted(t, again.ID, time.Minute, recs...)
	for _, key := range keys {
		if requests, _ := svc.counts(key); requests > 2 || (key != lost && requests != 1) {
			t.Errorf("%s: %d requests after a rewind", key, requests)
		}
	}
}

// 429 with Retry-After is waited out (at least the asked delay), 5xx and a
// timeout are retried with the same key, and a 4xx refusal is dead-lettered
// after the group's attempts.
func TestTransientAnswersAreRetriedAndRefusalsDeadLettered(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "notifications", 1)
	recs, keys := intents(f, topic, 4)
	throttled, failing, refused, slow := keys[0], keys[1], keys[2], keys[3]
	svc, url := newService(t, nil)
	svc.behave = func(w http.ResponseWriter, key string, n int) bool {
		switch {
		case key == throttled && n == 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		case key == failing && n <= 2:
			w.WriteHeader(http.StatusBadGateway)
			return false
		case key == refused:
			w.WriteHeader(http.StatusUnprocessableEntity)
			return false
		case key == slow && n == 1:
			time.Sleep(time.Second) // past the client's timeout: an uncertain outcome
		}
		return true
	}
	env.Produce(t, recs...)
	group := topic + ".dispatch"
	reg := prometheus.NewRegistry()
	h := dispatch.New(dispatch.Config{URL: url, Secret: secret, Timeout: 300 * time.Millisecond, Registerer: reg}, env.Pool, group)
	g := env.Run(t, consumers.Config{Topics: []string{topic}, Group: group, MaxAttempts: 3}, h, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	// An on-call reads the service's answers: every call once, by code.
	for code, want := range map[string]float64{"202": 3, "429": 1, "502": 2, "422": 3, "error": 1} {
		if got := testenv.Metric(t, reg, "sluice_dispatch_requests_total", map[string]string{"group": group, "code": code}); got != want {
			t.Errorf("sluice_dispatch_requests_total{code=%q} = %v, want %v", code, got, want)
		}
	}
	if n := histogramCount(t, reg, "sluice_dispatch_request_seconds"); n != 10 {
		t.Errorf("sluice_dispatch_request_seconds counted %d calls, want 10", n)
	}

	svc.mu.Lock()
	at := svc.requests[throttled]
	svc.mu.Unlock()
	if len(at) != 2 || at[1].Sub(at[0]) < time.Second {
		t.Errorf("throttled key: requests at %v, want 2 at least 1s apart", at)
	}
	if requests, sent := svc.counts(failing); requests != 3 || sent != 1 {
		t.Errorf("failing key: %d requests, %d sent; want 3, 1", requests, sent)
	}
	if requests, sent := svc.counts(refused); requests != 3 || sent != 0 {
		t.Errorf("refused key: %d requests, %d sent; want 3 (the attempts), 0", requests, sent)
	}
	if requests, sent := svc.counts(slow); requests != 2 || sent != 1 {
		t.Errorf("slow key: %d requests, %d sent; want 2 (same key after the timeout), 1", requests, sent)
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1 AND headers->>'ce_id' = $2`, g.ID, refused); n != 1 {
		t.Errorf("refused key: %d dead letters, want 1", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM dispatch_deliveries WHERE idempotency_key = ANY($1)`, keys); n != 3 {
		t.Errorf("dispatch log rows = %d, want 3 (never the refused one)", n)
	}

}

// Every call is signed with Standard Webhooks: a receiver verifying with
// Svix's library (the scheme's reference) accepts each one, and refuses the
// same call re-signed with another secret.
func TestEveryCallVerifiesWithTheReferenceLibrary(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "notifications", 2)
	recs, keys := intents(f, topic, 6)
	verifier, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := svix.NewWebhook("whsec_" + base64.StdEncoding.EncodeToString([]byte("another destination's key")))
	var mu sync.Mutex
	verified, refusedForgeries := map[string]bool{}, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get(dispatch.HeaderIdempotencyKey)
		ok := verifier.Verify(body, r.Header) == nil && r.Header.Get("webhook-id") == key
		resigned := r.Header.Clone()
		sig, _ := other.Sign(key, time.Now(), body)
		resigned.Set("webhook-signature", sig)
		mu.Lock()
		verified[key] = ok
		if verifier.Verify(body, resigned) != nil {
			refusedForgeries++
		}
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	env.Produce(t, recs...)
	group := topic + ".dispatch"
	g := env.Run(t, consumers.Config{Topics: []string{topic}, Group: group}, dispatch.New(dispatch.Config{URL: srv.URL, Secret: secret}, env.Pool, group), nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	mu.Lock()
	defer mu.Unlock()
	for _, key := range keys {
		if !verified[key] {
			t.Errorf("%s: the call did not verify with the destination's secret", key)
		}
	}
	if refusedForgeries != len(verified) {
		t.Errorf("%d of %d calls re-signed with another secret were refused, want all", refusedForgeries, len(verified))
	}
	if n := env.Count(t, `SELECT count(*) FROM dispatch_deliveries WHERE idempotency_key = ANY($1)`, keys); n != len(keys) {
		t.Errorf("dispatch log rows = %d, want %d", n, len(keys))
	}
}

// A destination that goes down opens the breaker within its threshold: the
// service is then left alone but for one probe per cooldown, instead of
// every partition retrying against it; another group keeps flowing; once
// it is back every intent arrives, each key sent once, in order per resource.
func TestBreakerSparesADownServiceAndEveryIntentArrivesAfter(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	const partitions, resources = 3, 6
	topic := env.Topic(t, "notifications", partitions)
	var (
		recs []*kgo.Record
		keys []string
	)
	for i := range 30 {
		key := fmt.Sprintf("%s/%s/in_%d/initial-credit-grant/confirmation-email", f.SourceID, f.Account, i)
		ev := f.Event(key, "sluice.email.credits_granted", "workspace", fmt.Sprintf("ws_%d", i%resources), time.Now())
		recs = append(recs, consumertest.Record(topic, ev, fmt.Appendf(nil, `{"idempotency_key":%q}`, key)))
		keys = append(keys, key)
	}
	var (
		mu        sync.Mutex
		down      = true
		whileDown int
		arrived   []string // first arrival of each key, in order
	)
	svc, url := newService(t, func(w http.ResponseWriter, key string, _ int) bool {
		mu.Lock()
		defer mu.Unlock()
		if down {
			whileDown++
			w.WriteHeader(http.StatusServiceUnavailable)
			return false
		}
		if !slices.Contains(arrived, key) {
			arrived = append(arrived, key)
		}
		return true
	})
	reg := prometheus.NewRegistry()
	breaker := dispatch.BreakerConfig{Failures: 3, Cooldown: 300 * time.Millisecond, MaxCooldown: time.Second}
	group := topic + ".dispatch"
	h := dispatch.New(dispatch.Config{URL: url, Secret: secret, Breaker: breaker, Registerer: reg}, env.Pool, group)
	env.Produce(t, recs...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}, Group: group, Backoff: 20 * time.Millisecond}, h, nil)

	// Meanwhile another group, with a service of its own, flows.
	otherTopic := env.Topic(t, "notifications", 1)
	otherRecs, _ := intents(env.Tenant(t, "stripe"), otherTopic, 3)
	_, otherURL := newService(t, nil)
	env.Produce(t, otherRecs...)
	other := env.Run(t, consumers.Config{Topics: []string{otherTopic}, Group: otherTopic + ".dispatch"},
		dispatch.New(dispatch.Config{URL: otherURL, Secret: secret}, env.Pool, otherTopic+".dispatch"), nil)
	env.WaitCommitted(t, other.ID, time.Minute, otherRecs...)

	// Down for several cooldowns: the breaker opens, probes, opens again.
	testenv.Eventually(t, time.Minute, "the breaker to open three times", func() (bool, error) {
		return metric(t, reg, "sluice_dispatch_breaker_opened_total") >= 3, nil
	})
	mu.Lock()
	down = false
	calls := whileDown
	mu.Unlock()
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	// The threshold, the calls in flight when it opened (one per
	// partition), and one probe per reopening.
	if limit := breaker.Failures + partitions + int(metric(t, reg, "sluice_dispatch_breaker_opened_total")); calls > limit {
		t.Errorf("the down service got %d calls, want at most %d with the breaker", calls, limit)
	}
	for _, key := range keys {
		if _, sent := svc.counts(key); sent != 1 {
			t.Errorf("%s: sent %d, want 1", key, sent)
		}
	}
	if got := metric(t, reg, "sluice_dispatch_breaker_state"); got != float64(dispatch.BreakerClosed) {
		t.Errorf("breaker state %v after recovery, want closed", got)
	}
	mu.Lock()
	defer mu.Unlock()
	byResource := map[string][]string{}
	for _, key := range arrived {
		r := string(recs[slices.Index(keys, key)].Key)
		byResource[r] = append(byResource[r], key)
	}
	for r, got := range byResource {
		var want []string
		for i, rec := range recs {
			if string(rec.Key) == r {
				want = append(want, keys[i])
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("resource %s: arrived %v, want %v", r, got, want)
		}
	}
}

// histogramCount reads how many observations histogram name of reg holds.
func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	return 0
}

// metric reads a metric's value from reg, summed over its series.
func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			v += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return v
}

// A send recorded by the dispatcher of before migration 00016 (in
// dispatch_log, read through dispatch_delivered until the lifecycle manager
// retires it) is not sent again after the upgrade, nor recorded twice.
func TestSendsRecordedBeforeTheUpgradeAreNotSentAgain(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "notifications", 1)
	recs, keys := intents(f, topic, 2)
	before := keys[0]
	if _, err := env.Pool.Exec(t.Context(), `INSERT INTO dispatch_log (idempotency_key, consumer_group, topic, partition, "offset", status)
		VALUES ($1, 'old', $2, 0, 0, 202)`, before, topic); err != nil {
		t.Fatal(err)
	}
	svc, url := newService(t, nil)
	env.Produce(t, recs...)
	cfg := consumers.Config{Topics: []string{topic}, Group: topic + ".dispatch"}
	g := env.Run(t, cfg, dispatch.New(dispatch.Config{URL: url, Secret: secret, Timeout: 5 * time.Second}, env.Pool, cfg.Group), nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	for i, key := range keys {
		requests, _ := svc.counts(key)
		logged := env.Count(t, `SELECT count(*) FROM dispatch_deliveries WHERE idempotency_key = $1`, key)
		if want := min(i, 1); requests != want || logged != want {
			t.Errorf("%s: %d requests, %d new records; want %d of each", key, requests, logged, want)
		}
	}
}
