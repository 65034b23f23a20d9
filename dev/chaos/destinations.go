package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
)

// endpoint is one tenant endpoint of the run, served by the receiver.
type endpoint struct {
	id, name, tenant string
	filters          []string
	ordered          bool
	key              []byte // the signing key of its secret
}

// takes is the filter rule of docs/destinations.md, written again here so
// the check does not trust the matcher it checks.
func (e *endpoint) takes(eventType string) bool {
	for _, f := range e.filters {
		switch {
		case f == "*", f == eventType:
			return true
		case strings.HasSuffix(f, ".*") && strings.HasPrefix(eventType, f[:len(f)-1]):
			return true
		}
	}
	return false
}

// receipt is one request an endpoint received.
type receipt struct {
	webhookID, identity, eventType string
	seq                            int  // arrival order across the receiver
	ok                             bool // answered 2xx
	signed                         bool // one of its signatures verified with the endpoint's key
}

// receiver is every endpoint's HTTP server, in the driver's process: it
// records each request and answers 2xx, except the first attempt of one
// webhook-id in eight, answered 503, so retries and order are exercised
// on every fault; and the first attempt of another one in eight is
// answered after slowAnswer, so a kill catches requests in flight.
type receiver struct {
	srv       *http.Server
	url       string
	endpoints map[string]*endpoint // by name

	mu      sync.Mutex
	seq     int
	got     map[string][]receipt // endpoint name -> receipts in arrival order
	refused int                  // 503s answered
	// abandoned counts requests whose deliverer left before the answer
	// (killed, or its timeout).
	abandoned int
	attempts  map[string]int // endpoint name + webhook-id -> requests
	// badMessageIDs counts RabbitMQ messages whose message id is not their
	// webhook-id (the id a queue's consumer deduplicates on).
	badMessageIDs int
}

func newReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	r := &receiver{url: "http://" + ln.Addr().String(), endpoints: map[string]*endpoint{}, got: map[string][]receipt{}, attempts: map[string]int{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) close() { _ = r.srv.Close() }

// ServeHTTP records one request to /e/{name}.
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	ep := r.endpoints[strings.TrimPrefix(req.URL.Path, "/e/")]
	body, err := io.ReadAll(req.Body)
	if ep == nil || err != nil {
		http.Error(w, "no such endpoint", http.StatusNotFound)
		return
	}
	id := req.Header.Get(standardwebhooks.IDHeader)
	rc := receipt{webhookID: id, identity: req.Header.Get("ce-source") + " " + req.Header.Get("ce-id"),
		eventType: req.Header.Get("ce-type"), signed: verifies(ep.key, req.Header, body)}
	r.mu.Lock()
	r.attempts[ep.name+" "+id]++
	firstAttempt := r.attempts[ep.name+" "+id] == 1
	r.mu.Unlock()
	sum := sha256.Sum256([]byte(id))
	if firstAttempt && sum[1]%8 == 0 {
		// A slow answer: a deliverer killed meanwhile leaves its lease to
		// run out, and the delivery must come again, under its webhook-id.
		select {
		case <-time.After(slowAnswer):
		case <-req.Context().Done():
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	rc.seq = r.seq
	switch {
	case req.Context().Err() != nil:
		r.abandoned++ // the deliverer left before the answer: not taken
	case firstAttempt && sum[0]%8 == 0:
		r.refused++
		http.Error(w, "chaos: first attempt refused", http.StatusServiceUnavailable)
	default:
		rc.ok = true
		w.WriteHeader(http.StatusNoContent)
	}
	r.got[ep.name] = append(r.got[ep.name], rc)
}

// slowAnswer is how long the receiver keeps one first attempt in eight.
const slowAnswer = 500 * time.Millisecond

// verifies reports whether one of the request's v1 signatures is key's.
func verifies(key []byte, h http.Header, body []byte) bool {
	secs, err := strconv.ParseInt(h.Get(standardwebhooks.TimestampHeader), 10, 64)
	if err != nil {
		return false
	}
	want := standardwebhooks.Signature(key, h.Get(standardwebhooks.IDHeader), time.Unix(secs, 0), body)
	return slices.Contains(strings.Fields(h.Get(standardwebhooks.SignatureHeader)), want)
}

// endpointSpec is one endpoint each tenant is given.
type endpointSpec struct {
	kind    string
	ordered bool
	filters []string
}

// createEndpoints gives the tenants their endpoints, as a tenant would
// through the admin API: the rows, the secret sealed with the key ring
// (additional data: the endpoint id). Every tenant but the last has one
// ordered "*" endpoint; every tenant an unordered one for invoices alone
// and an ordered one whose filter matches nothing the load sends. The
// last tenant's generic HMAC pings, which no endpoint of it takes, stay
// unhandled.
func createEndpoints(ctx context.Context, pool *pgxpool.Pool, secretKey string, tenants []*tenant, r *receiver) error {
	ring, err := keyring.Parse(secretKey)
	if err != nil {
		return fmt.Errorf("key ring: %w", err)
	}
	for i, t := range tenants {
		specs := []endpointSpec{{"invoices", false, []string{"stripe.invoice.*"}}, {"never", true, []string{"hmac.never.sent"}}}
		if i < len(tenants)-1 {
			specs = append(specs, endpointSpec{"all", true, []string{"*"}})
		}
		for _, s := range specs {
			ep := &endpoint{name: fmt.Sprintf("%s-%d", s.kind, i), tenant: t.id, filters: s.filters, ordered: s.ordered}
			if err := pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters, ordered) VALUES ($1, $2, $3, $4) RETURNING id`,
				t.id, r.url+"/e/"+ep.name, s.filters, s.ordered).Scan(&ep.id); err != nil {
				return fmt.Errorf("endpoint %s: %w", ep.name, err)
			}
			ep.key = make([]byte, 32)
			_, _ = rand.Read(ep.key)
			secret := standardwebhooks.SecretPrefix + base64.StdEncoding.EncodeToString(ep.key)
			keyID, sealed, err := ring.Seal([]byte(secret), []byte(ep.id))
			if err != nil {
				return fmt.Errorf("seal %s: %w", ep.name, err)
			}
			if _, err := pool.Exec(ctx, `INSERT INTO endpoint_secrets (endpoint_id, key_id, ciphertext) VALUES ($1, $2, $3)`, ep.id, keyID, sealed); err != nil {
				return fmt.Errorf("secret %s: %w", ep.name, err)
			}
			r.endpoints[ep.name] = ep
		}
	}
	return nil
}

// expected is, per endpoint name, the identities ("ce_source ce_id") it
// must receive, and per ordered endpoint their Kafka order: one sequence
// per topic and record key, first publication of each identity.
type expected struct {
	want  map[string]map[string]bool
	order map[string][][]string
}

// expect reads what each endpoint must receive from the Kafka records of
// the tenants' events (every topic but dead letters), not from the
// deliveries table the fan-out writes.
func (r *receiver) expect(events []kafkaEvent) expected {
	byTenant := map[string][]*endpoint{}
	for _, ep := range r.endpoints {
		byTenant[ep.tenant] = append(byTenant[ep.tenant], ep)
	}
	x := expected{want: map[string]map[string]bool{}, order: map[string][][]string{}}
	seqs := map[string]map[string][]string{} // endpoint -> topic/key -> identities
	for _, ev := range events {
		for _, ep := range byTenant[ev.tenant] {
			if !ep.takes(ev.eventType) {
				continue
			}
			if x.want[ep.name] == nil {
				x.want[ep.name], seqs[ep.name] = map[string]bool{}, map[string][]string{}
			}
			if x.want[ep.name][ev.identity] {
				continue // published again: one delivery
			}
			x.want[ep.name][ev.identity] = true
			if ep.ordered {
				k := ev.topic + " " + ev.key
				seqs[ep.name][k] = append(seqs[ep.name][k], ev.identity)
			}
		}
	}
	for name, byKey := range seqs {
		for _, s := range byKey {
			x.order[name] = append(x.order[name], s)
		}
	}
	return x
}

// missing counts the identities an endpoint was due that it never took
// (answered 2xx).
func (r *receiver) missing(x expected) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for name, want := range x.want {
		took := map[string]bool{}
		for _, rc := range r.got[name] {
			if rc.ok {
				took[rc.identity] = true
			}
		}
		for id := range want {
			if !took[id] {
				n++
			}
		}
	}
	return n
}

// settleDeliveries waits until every outbox row is in Kafka, the fan-out
// group has committed to the end, nothing is pending in deliveries and
// every endpoint took what Kafka says it must: bounded and polled. The
// bound covers a killed deliverer's lease (five of its timeouts and 30 s).
func (c *chaos) settleDeliveries(ctx context.Context) (expected, error) {
	var x expected
	began := time.Now()
	err := poll(ctx, pick(c.quick, 45*time.Second, 90*time.Second), "every delivery to settle", func() (bool, error) {
		// What the queue and the topic hold first, whatever else is
		// missing: a run failing on the outbox must not also report the
		// targets' messages as lost.
		if c.targets != nil {
			if err := c.targets.read(ctx, c.receiver); err != nil {
				return false, err
			}
		}
		ids, err := c.outboxIDs(ctx)
		if err != nil {
			return false, err
		}
		if m := c.reader.missing(ids); len(m) > 0 {
			return false, fmt.Errorf("%d outbox rows not in Kafka yet", len(m))
		}
		if ok, err := groupsCaughtUp(ctx, c.adm, []string{destinationsGroup}); !ok {
			return false, err
		}
		var pending int
		if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE state = 'pending'`).Scan(&pending); err != nil {
			return false, err
		}
		x = c.receiver.expect(c.reader.tenantEvents())
		if n := c.receiver.missing(x); n > 0 || pending > 0 {
			return false, fmt.Errorf("%d deliveries pending, %d expected receipts missing", pending, n)
		}
		return true, nil
	})
	c.log.Info("deliveries settled", slog.Duration("took", time.Since(began)), slog.Any("error", err))
	return x, err
}

// destinationsGroup is the fan-out's consumer group in the run.
const destinationsGroup = "chaos.destinations"

// checkDestinations: each endpoint received every event Kafka holds for
// it at least once, nothing it does not take, its first receipts of a
// resource in Kafka order (ordered endpoints), each event under one
// webhook-id and each webhook-id for one event, every request signed with
// its key; no delivery dead or left pending.
func (c *chaos) checkDestinations(ctx context.Context) error {
	x, settleErr := c.settleDeliveries(ctx)
	if settleErr != nil {
		c.violate("destinations: %v", settleErr)
		x = c.receiver.expect(c.reader.tenantEvents())
	}
	r := c.receiver
	r.mu.Lock()
	defer r.mu.Unlock()
	d := &c.report.Destinations
	d.Refused503, d.Abandoned, d.MessageIDs = r.refused, r.abandoned, r.badMessageIDs
	if r.badMessageIDs > 0 {
		c.violate("destinations: %d RabbitMQ messages whose message id is not their webhook-id", r.badMessageIDs)
	}
	for _, name := range slices.Sorted(maps.Keys(r.endpoints)) {
		c.checkEndpoint(r.endpoints[name], r.got[name], x, d)
	}
	var dead, pending int
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'dead'), count(*) FILTER (WHERE state = 'pending') FROM deliveries`).Scan(&dead, &pending); err != nil {
		return fmt.Errorf("deliveries: %w", err)
	}
	if dead+pending > 0 {
		c.violate("destinations: %d deliveries dead, %d pending at the end", dead, pending)
	}
	return nil
}

// checkEndpoint checks one endpoint's receipts against what it was due.
func (c *chaos) checkEndpoint(ep *endpoint, got []receipt, x expected, d *destinationFigures) {
	want := x.want[ep.name]
	// A few of each kind are named; the rest counted, so one broken rule
	// does not bury the others.
	named := map[string]int{}
	note := func(kind, format string, args ...any) {
		if named[kind]++; named[kind] <= 3 {
			c.violate("destinations: "+ep.name+" "+format, args...)
		}
	}
	defer func() {
		for _, kind := range slices.Sorted(maps.Keys(named)) {
			if n := named[kind]; n > 3 {
				c.violate("destinations: %s: %d more %s", ep.name, n-3, kind)
			}
		}
	}()
	first := map[string]int{}           // identity -> seq of its first 2xx
	webhookIDs := map[string][]string{} // identity -> webhook-ids seen
	identities := map[string][]string{} // webhook-id -> identities seen
	for _, rc := range got {
		d.Requests++
		if !rc.signed {
			d.Unsigned++
			note("unsigned", "got %s (%s) without a signature of its key", rc.webhookID, rc.identity)
		}
		if !want[rc.identity] || !ep.takes(rc.eventType) {
			d.Stray++
			note("stray", "(filters %v) got %s of type %s, which it does not take", ep.filters, rc.identity, rc.eventType)
		}
		if !slices.Contains(webhookIDs[rc.identity], rc.webhookID) {
			webhookIDs[rc.identity] = append(webhookIDs[rc.identity], rc.webhookID)
		}
		if !slices.Contains(identities[rc.webhookID], rc.identity) {
			identities[rc.webhookID] = append(identities[rc.webhookID], rc.identity)
		}
		if !rc.ok {
			continue
		}
		if _, seen := first[rc.identity]; seen {
			d.Redelivered++
		} else {
			first[rc.identity] = rc.seq
		}
	}
	d.Expected += len(want)
	for id := range want {
		if _, ok := first[id]; !ok {
			d.Lost++
			note("lost", "never took %s", id)
		}
	}
	for id, ws := range webhookIDs {
		if len(ws) > 1 {
			d.UnstableWebhookIDs++
			note("unstable webhook-ids", "got %s under %d webhook-ids %v", id, len(ws), ws)
		}
	}
	for w, ids := range identities {
		if len(ids) > 1 {
			d.UnstableWebhookIDs++
			note("shared webhook-ids", "got webhook-id %s for %d events %v", w, len(ids), ids)
		}
	}
	for _, seq := range x.order[ep.name] {
		last, lastID := 0, ""
		for _, id := range seq {
			at, ok := first[id]
			if !ok {
				continue
			}
			if at < last {
				d.OutOfOrder++
				note("out of order", "took %s before %s, which Kafka has first", id, lastID)
			}
			if at > last {
				last, lastID = at, id
			}
		}
	}
}

// destinationFigures is what the endpoints received, in the report.
type destinationFigures struct {
	Endpoints          int `json:"endpoints"`
	Expected           int `json:"expected_receipts"`
	Requests           int `json:"requests"`
	Refused503         int `json:"first_attempts_refused_503"`
	Redelivered        int `json:"redelivered_after_2xx"`
	Abandoned          int `json:"abandoned_in_flight"`
	Lost               int `json:"lost"`
	Stray              int `json:"stray"`
	OutOfOrder         int `json:"out_of_order"`
	UnstableWebhookIDs int `json:"unstable_webhook_ids"`
	Unsigned           int `json:"unsigned"`
	MessageIDs         int `json:"message_ids_not_webhook_ids,omitempty"`
}
