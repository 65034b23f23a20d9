package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/internal/keyring"
)

// The deliver step: what destinations cost the pipeline, how soon an
// accepted event reaches its endpoint, and whether bad endpoints delay
// anyone else's. The endpoints are servers in the bench process; the
// stage is `sluice serve` with the deliverer (the default) allowed to dial
// loopback over plain HTTP, and without the per-endpoint rate cap (the
// bench measures capacity, as it lifts the tenants' limit).
//
// Its tenants are its own, made for the step: what it enables, disables
// and leaves pending concerns none of the other steps.

// endpointRefresh is how long after an endpoint is enabled or disabled
// the fan-out and the deliverer both see it (their refresh is 5 s).
const endpointRefresh = 6 * time.Second

// deliverWorld is the step's tenants and endpoints.
type deliverWorld struct {
	// with have one endpoint each, subscribed to "*", at recv; without
	// have none: the saturated windows alternate between the two sets.
	with, without []benchSource
	withEndpoints []string
	// iso are the isolation windows' tenants: isoGood with endpoints at
	// recv, then two whose endpoints are bad (ids in bad): X refuses
	// connections, Y answers after 5 s.
	iso  []benchSource
	bad  []string
	recv *receiver
	slow *receiver
}

// isoGood is how many of the isolation tenants have good endpoints.
const isoGood = 10

// deliverTenants is how many tenants the saturated windows send to: with an
// endpoint each, and as many without.
const deliverTenants = 8

func (b *bench) deliver(ctx context.Context) error {
	w, err := b.deliverWorld(ctx)
	if err != nil {
		return err
	}
	defer w.recv.close()
	defer w.slow.close()
	// Whatever the step leaves pending is no later step's work, and its
	// rows are not the lifecycle's (sustained measures what cleanup
	// writes): every endpoint and delivery is the step's own.
	defer func() {
		if _, err := b.pool.Exec(context.WithoutCancel(ctx), `UPDATE endpoints SET disabled_at = now(), disabled_reason = 'operator' WHERE disabled_at IS NULL`); err != nil {
			log.Printf("deliver: disable the step's endpoints: %v", err)
		}
		if _, err := b.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM deliveries`); err != nil {
			log.Printf("deliver: delete the step's deliveries: %v", err)
		}
	}()
	if err := b.setBad(ctx, w, false); err != nil {
		return err
	}
	slot := b.slot("deliver")
	env := append(b.sluiceEnv(b.stageAddr, slot),
		"SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8", "SLUICE_DELIVERY_MAX_RATE=1000000")
	p, err := start("sluice-serve-deliver", b.bin, []string{"serve"}, env, b.stageAddr, b.adminAddr, "/readyz/stages", b.outDir)
	if err != nil {
		return err
	}
	b.opsAddr = p.ops
	defer func() {
		p.terminate()
		// Its slot would make later steps relay this step's leftovers first.
		if _, err := b.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_drop_replication_slot($1)`, slot); err != nil {
			log.Printf("deliver: drop slot: %v", err)
		}
	}()
	began := time.Now()
	b.results["deliver_undelivered_events"] = 0 // measured, so a guard can hold it at 0
	// A fan-out group new to this run reads every earlier step's records
	// first (none of them matches an endpoint).
	if err := b.waitPipeline(ctx, slot); err != nil {
		return err
	}
	if err := b.quietPostgres(ctx, "deliver"); err != nil {
		return err
	}
	for _, part := range []func() error{
		func() error { return b.deliverSaturated(ctx, p, w, slot) },
		func() error { return b.deliverLatency(ctx, w) },
		func() error { return b.deliverIsolation(ctx, w) },
		func() error { return b.deliverKinds(ctx, p, w) },
	} {
		if err := part(); err != nil {
			b.logPending(ctx)
			return err
		}
	}
	b.results["deliver_seconds"] = time.Since(began).Seconds()
	b.logDeliveryStats(w)
	return nil
}

// deliverWorld makes the step's tenants, endpoints and receivers.
func (b *bench) deliverWorld(ctx context.Context) (*deliverWorld, error) {
	w := &deliverWorld{}
	var err error
	if w.recv, err = newReceiver(0, deliverTenants+isoGood); err != nil {
		return nil, err
	}
	if w.slow, err = newReceiver(5*time.Second, 1); err != nil {
		return nil, err
	}
	// X: a port nothing listens on (it was free a moment ago).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	closed := "http://" + ln.Addr().String() + "/x"
	ln.Close()
	if w.with, err = b.newSources(ctx, "deliver-with", deliverTenants); err != nil {
		return nil, err
	}
	if w.without, err = b.newSources(ctx, "deliver-without", deliverTenants); err != nil {
		return nil, err
	}
	if w.iso, err = b.newSources(ctx, "deliver-iso", isoGood+2); err != nil {
		return nil, err
	}
	ring, err := keyring.Parse(b.secretKey)
	if err != nil {
		return nil, err
	}
	for i, s := range w.with {
		id, err := b.newEndpoint(ctx, ring, s.tenantID, fmt.Sprintf("%s/with/%d", w.recv.url(i), i))
		if err != nil {
			return nil, err
		}
		w.withEndpoints = append(w.withEndpoints, id)
	}
	for i, s := range w.iso[:isoGood] {
		if _, err := b.newEndpoint(ctx, ring, s.tenantID, fmt.Sprintf("%s/iso/%d", w.recv.url(deliverTenants+i), i)); err != nil {
			return nil, err
		}
	}
	for i, url := range []string{closed, w.slow.url(0) + "/y"} {
		id, err := b.newEndpoint(ctx, ring, w.iso[isoGood+i].tenantID, url)
		if err != nil {
			return nil, err
		}
		w.bad = append(w.bad, id)
	}
	return w, nil
}

// newEndpoint gives tenant an endpoint at url subscribed to every event,
// with a fresh signing secret sealed as the endpoints store keeps it.
func (b *bench) newEndpoint(ctx context.Context, ring *keyring.Ring, tenantID, url string) (string, error) {
	var id string
	if err := b.pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, $2, '{*}') RETURNING id`,
		tenantID, url).Scan(&id); err != nil {
		return "", fmt.Errorf("create endpoint: %w", err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyID, sealed, err := ring.Seal([]byte("whsec_"+base64.StdEncoding.EncodeToString(key)), []byte(id))
	if err != nil {
		return "", err
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO endpoint_secrets (endpoint_id, key_id, ciphertext) VALUES ($1, $2, $3)`, id, keyID, sealed); err != nil {
		return "", fmt.Errorf("seal endpoint secret: %w", err)
	}
	return id, nil
}

// setBad enables or disables the bad endpoints X and Y.
func (b *bench) setBad(ctx context.Context, w *deliverWorld, on bool) error {
	q := `UPDATE endpoints SET disabled_at = now(), disabled_reason = 'operator' WHERE id = ANY($1)`
	if on {
		q = `UPDATE endpoints SET disabled_at = NULL, disabled_reason = NULL WHERE id = ANY($1)`
	}
	_, err := b.pool.Exec(ctx, q, w.bad)
	return err
}

// waitPipeline waits until the relay confirmed the WAL written so far and
// the credits and fan-out groups read every record it published, then for
// the relay again (the e-mails the grants caused).
func (b *bench) waitPipeline(ctx context.Context, slot string) error {
	if err := b.waitRelayed(ctx, slot); err != nil {
		return err
	}
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	groups := []string{b.prefix + ".credits", b.prefix + ".destinations"}
	if err := waitFor(ctx, 10*time.Minute, "the credits and destinations groups to catch up", func() (bool, error) {
		lags, err := adm.Lag(ctx, groups...)
		if err != nil {
			return false, err
		}
		for _, g := range groups {
			l, ok := lags[g]
			if !ok {
				return false, fmt.Errorf("group %s not described", g)
			}
			if err := l.Error(); err != nil {
				return false, err
			}
			if l.Lag.Total() > 0 {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return err
	}
	return b.waitRelayed(ctx, slot)
}

// satWindow is one saturated window's figures.
type satWindow struct {
	rate float64
	ok   float64 // accepted (2xx), redeliveries included
	// deliveries is the requests the endpoints answered: an event
	// accepted once each, and the e-mail intents the credits consumer
	// published for them (the endpoints take every type).
	deliveries float64
	// used is the CPU each process spent until the window's
	// load was applied (and delivered).
	used  cpuSample
	drain float64 // seconds from the end of the load to the last arrival
	// rows is what the window wrote to the destinations' tables.
	rows rowOps
}

// deliverSaturated alternates saturated windows to the tenants with
// endpoints and to those without (ABBA, so drift falls on both), each
// counted until the pipeline applied its load and, with endpoints, until
// every accepted event arrived; beside each pair it measures the ratios'
// baselines (deliverBaselines).
func (b *bench) deliverSaturated(ctx context.Context, p *proc, w *deliverWorld, slot string) error {
	var with, without, drains []float64
	perDelivery := map[string][]float64{}
	cpu := map[string][]float64{}
	drop, err := b.pgbenchTables(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = drop() }()
	null, err := start("null", b.self, []string{"null-server", b.nullAddr}, nil, b.nullAddr, "", "/", b.outDir)
	if err != nil {
		return err
	}
	defer null.terminate()
	// Two pairs even in quick mode: one pair is one window each, and
	// whatever else the machine does in one of them falls on one side.
	for pair := range pick(b.quick, 2, 3) {
		var on, off satWindow
		for _, withEndpoints := range abba(pair) {
			win, err := b.satWindow(ctx, p, w, slot, withEndpoints, cpu)
			if err != nil {
				return err
			}
			if withEndpoints {
				on = win
			} else {
				off = win
			}
		}
		with, without, drains = append(with, on.rate), append(without, off.rate), append(drains, on.drain)
		// The CPU beyond what as many accepted events cost without
		// endpoints, per delivery.
		for _, name := range []string{"sluice", "postgres", "kafka"} {
			extra := float64(on.used[name].Microseconds()) - float64(off.used[name].Microseconds())/off.ok*on.ok
			perDelivery[name] = append(perDelivery[name], extra/on.deliveries)
		}
		perDelivery["row_ops"] = append(perDelivery["row_ops"], on.rows.ops()/on.deliveries)
		perDelivery["hot"] = append(perDelivery["hot"], on.rows.hotShare())
		log.Printf("deliver: row operations per delivery %.2f (%s), %.0f%% of the deliveries' updates heap-only",
			on.rows.ops()/on.deliveries, on.rows.perDelivery(on.deliveries), 100*on.rows.hotShare())
		if err := b.deliverBaselines(ctx, null, cpu); err != nil {
			return err
		}
	}
	b.medians(cpu)
	b.results["deliver_events_per_s"] = median(with)
	b.results["deliver_without_events_per_s"] = median(without)
	b.results["deliver_ratio_of_without"] = median(with) / median(without)
	b.results["deliver_drain_s"] = median(drains)
	for _, name := range []string{"sluice", "postgres", "kafka"} {
		b.results["deliver_"+name+"_cpu_us_per_delivery"] = median(perDelivery[name])
	}
	b.results["deliver_row_ops_per_delivery"] = median(perDelivery["row_ops"])
	b.results["deliver_hot_update_share"] = median(perDelivery["hot"])
	// The targets' ratios, both baselines measured in this step.
	b.results["deliver_postgres_cpu_ratio_of_pgbench_row"] = b.results["deliver_postgres_cpu_us_per_delivery"] /
		b.results["deliver_pgbench_postgres_cpu_us_per_event"]
	b.results["deliver_sluice_cpu_ratio_of_null_request"] = b.results["deliver_sluice_cpu_us_per_delivery"] /
		b.results["deliver_null_null_cpu_us_per_event"]
	return nil
}

// deliverBaselines measures what the step's targets divide by, beside its
// windows and with `sluice serve` idle: the null server's CPU per request
// (the generator's signed webhooks, saturated: an HTTP server that only
// answers), and Postgres's per event of pgbench writing 100 events (an
// inbox row with a 1 KB body and its outbox row) per transaction.
func (b *bench) deliverBaselines(ctx context.Context, null *proc, cpu map[string][]float64) error {
	if err := b.quietPostgres(ctx, "deliver baselines"); err != nil {
		return err
	}
	before := b.cpu.sample(null)
	r := b.generatorFor(b.nullAddr, conns).saturate(conns, b.deliverWindow())
	b.cpu.perEvent("deliver_null", before, b.cpu.sample(null).only("null", "generator"), float64(r.ok), cpu)
	if _, err := b.pgbenchRound(ctx, "deliver_pgbench", 100, b.deliverWindow(), cpu); err != nil {
		return err
	}
	return b.quietPostgres(ctx, "deliver")
}

// abba is the order of pair i's windows: without endpoints first, then
// with, and the other way round for the next pair.
func abba(i int) []bool {
	if i%2 == 0 {
		return []bool{false, true}
	}
	return []bool{true, false}
}

func (b *bench) satWindow(ctx context.Context, p *proc, w *deliverWorld, slot string, withEndpoints bool, cpu map[string][]float64) (satWindow, error) {
	sources, step := w.without, "deliver_without"
	if withEndpoints {
		sources, step = w.with, "deliver"
	}
	g := b.generatorOf(b.stageAddr, conns, sources)
	ans := track(g, nil)
	if withEndpoints && os.Getenv("BENCH_PROFILE") != "" {
		go b.profile("deliver", b.opsAddr, b.deliverWindow()+5*time.Second)
	}
	rowsBefore, err := b.deliveryRowOps(ctx)
	if err != nil {
		return satWindow{}, err
	}
	stmts := b.readStatements(ctx)
	before, requests := b.cpu.sample(p), w.recv.requests.Load()
	r := g.saturate(conns, b.deliverWindow())
	ended := time.Now()
	if err := b.waitPipeline(ctx, slot); err != nil {
		return satWindow{}, err
	}
	win := satWindow{rate: r.rate(), ok: float64(r.ok)}
	ids := ans.ids()
	if withEndpoints {
		missing, err := w.recv.waitAll(ctx, ids, b.stall())
		if err != nil {
			return satWindow{}, err
		}
		b.undelivered(missing)
		win.drain = time.Since(ended).Seconds()
		// Then what the load's grants caused: e-mail intents, relayed,
		// fanned out and delivered too.
		if err := b.waitPipeline(ctx, slot); err != nil {
			return satWindow{}, err
		}
		if err := b.waitNoPending(ctx, w.withEndpoints); err != nil {
			return satWindow{}, err
		}
		// The vacuum of the deliveries' rows is theirs, not the next
		// window's.
		if err := b.quietPostgres(ctx, "deliver"); err != nil {
			return satWindow{}, err
		}
		win.deliveries = float64(w.recv.requests.Load() - requests)
		rowsAfter, err := b.settledRowOps(ctx)
		if err != nil {
			return satWindow{}, err
		}
		win.rows = rowsAfter.since(rowsBefore)
		b.writeStatements(ctx, "deliver", stmts, win.deliveries)
	}
	after := b.cpu.sample(p)
	b.cpu.perEvent(step, before, after, win.ok, cpu)
	win.used = cpuSample{}
	for name, t := range after {
		win.used[name] = t - before[name]
	}
	delivered := ""
	if withEndpoints {
		delivered = fmt.Sprintf("; %.0f delivered %.1f s after the load", win.deliveries, win.drain)
	}
	log.Printf("deliver: %s, %.0f events/s accepted (%d errors), sluice %.0f us and postgres %.0f us per accepted event%s",
		map[bool]string{false: "without endpoints", true: "an endpoint per tenant"}[withEndpoints], r.rate(), r.errors, float64(win.used["sluice"].Microseconds())/win.ok,
		float64(win.used["postgres"].Microseconds())/win.ok, delivered)
	return win, nil
}

// deliverLatency paces 1,000 events/s to the tenants with endpoints and
// measures from each 2xx at the generator to the event's arrival at its
// endpoint.
func (b *bench) deliverLatency(ctx context.Context, w *deliverWorld) error {
	var p50s, p99s []float64
	for range b.runs() {
		g := b.generatorOf(b.stageAddr, 2*conns, w.with)
		ans := track(g, nil)
		r := g.paced(1000, 2*conns, b.deliverWindow())
		lat, missing, err := w.recv.latencies(ctx, ans, b.stall())
		if err != nil {
			return err
		}
		b.undelivered(missing)
		p50s, p99s = append(p50s, ms(lat.percentile(0.5))), append(p99s, ms(lat.percentile(0.99)))
		log.Printf("deliver at 1,000/s: %.0f accepted/s, %d errors; 2xx -> arrival over %d events: p50 %.1f ms, p99 %.1f ms",
			r.rate(), r.errors, len(lat.latencies), p50s[len(p50s)-1], p99s[len(p99s)-1])
	}
	b.results["deliver_p50_ms_at_1000"] = median(p50s)
	b.results["deliver_p99_ms_at_1000"] = median(p99s)
	return nil
}

// deliverIsolation paces events to the isolation tenants, 50/s each (500/s
// to the ten with good endpoints), in windows alternating between X and Y
// enabled and disabled (ABBA: one change per pair), and compares the good
// endpoints' 2xx -> arrival p99 with and without them.
func (b *bench) deliverIsolation(ctx context.Context, w *deliverWorld) error {
	const rate = 50 * (isoGood + 2)
	// The first window would otherwise read the vacuum of the latency
	// runs' deliveries.
	if err := b.quietPostgres(ctx, "deliver isolation"); err != nil {
		return err
	}
	var with, without []float64
	enabled, toggled := false, time.Time{}
	for pair := range pick(b.quick, 1, 3) {
		for _, bad := range abba(pair) {
			if bad != enabled {
				if err := b.setBad(ctx, w, bad); err != nil {
					return err
				}
				enabled, toggled = bad, time.Now()
			}
			time.Sleep(time.Until(toggled.Add(endpointRefresh)))
			g := b.generatorOf(b.stageAddr, 2*conns, w.iso)
			ans := track(g, func(ti int) bool { return ti < isoGood })
			r := g.paced(rate, 2*conns, b.deliverWindow())
			lat, missing, err := w.recv.latencies(ctx, ans, b.stall())
			if err != nil {
				return err
			}
			b.undelivered(missing)
			p99 := ms(lat.percentile(0.99))
			if bad {
				with = append(with, p99)
			} else {
				without = append(without, p99)
			}
			log.Printf("deliver isolation, X and Y %s: %.0f accepted/s, %d errors; good endpoints' 2xx -> arrival over %d events: p50 %.1f ms, p99 %.1f ms",
				map[bool]string{false: "disabled", true: "enabled"}[bad], r.rate(), r.errors, len(lat.latencies), ms(lat.percentile(0.5)), p99)
		}
	}
	b.results["deliver_isolation_p99_ms_without_bad"] = median(without)
	b.results["deliver_isolation_p99_ms_with_bad"] = median(with)
	b.results["deliver_isolation_p99_ratio"] = median(with) / median(without)
	return nil
}

// deliverWindow is the step's load window: shorter than the others' in
// quick mode, where the step's windows are many and each is followed by
// the wait for its deliveries.
func (b *bench) deliverWindow() time.Duration { return pick(b.quick, 3*time.Second, 10*time.Second) }

// waitNoPending waits until the endpoints have no pending delivery, or
// until the number stopped falling for the stall time (those left are
// counted where the events they belong to are).
func (b *bench) waitNoPending(ctx context.Context, endpointIDs []string) error {
	last, progressed := int64(-1), time.Now()
	for {
		var pending int64
		if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE endpoint_id = ANY($1) AND state = 'pending'`, endpointIDs).Scan(&pending); err != nil {
			return err
		}
		if pending != last {
			last, progressed = pending, time.Now()
		}
		if pending == 0 || time.Since(progressed) > b.stall() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stall is how long without an arrival the step waits for the events
// still due before counting them undelivered.
func (b *bench) stall() time.Duration { return pick(b.quick, 10*time.Second, 20*time.Second) }

// undelivered counts accepted events that never arrived: each is a
// failure of the deliverer (the step's endpoints answer 204), and is named
// in the notes with where the deliveries stand.
func (b *bench) undelivered(n int) {
	if n == 0 {
		return
	}
	b.results["deliver_undelivered_events"] += float64(n)
	b.note("deliver: %d accepted events never arrived at their endpoint (nothing arrived for %s)", n, b.stall())
	b.logPending(context.Background())
}

// logPending says, on a timeout, where the deliveries not yet delivered
// stand, by endpoint.
func (b *bench) logPending(ctx context.Context) {
	rows, err := b.pool.Query(ctx, `SELECT e.url, count(*) FILTER (WHERE d.next_at > now()),
		count(*) FILTER (WHERE d.next_at <= now()), max(d.attempts), min(d.created_at)::text
		FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id WHERE d.state = 'pending' GROUP BY e.url ORDER BY e.url`)
	if err != nil {
		log.Printf("deliver: pending deliveries: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var url, oldest string
		var waiting, due, attempts int
		if err := rows.Scan(&url, &waiting, &due, &attempts, &oldest); err != nil {
			log.Printf("deliver: pending deliveries: %v", err)
			return
		}
		log.Printf("deliver: pending at %s: %d waiting for a retry, %d due, at most %d attempts, oldest %s", url, waiting, due, attempts, oldest)
	}
}

// logDeliveryStats notes what the receivers and the bad endpoints saw.
func (b *bench) logDeliveryStats(w *deliverWorld) {
	var x, y float64
	_ = b.pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE endpoint_id = $1), count(*) FILTER (WHERE endpoint_id = $2)
		FROM delivery_attempts WHERE endpoint_id = ANY(ARRAY[$1, $2]::uuid[])`, w.bad[0], w.bad[1]).Scan(&x, &y)
	b.note("deliver: the null endpoint answered %d requests (%d repeats of an event already received); X refused %.0f attempts, Y answered %d requests after 5 s (%.0f failed attempts)",
		w.recv.requests.Load(), w.recv.repeats.Load(), x, w.slow.requests.Load(), y)
}

// answered records when the generator got each event's first 2xx.
type answered struct {
	mu sync.Mutex
	at map[string]time.Time
}

// track records g's 2xx answers to the targets keep accepts (nil: all).
func track(g *generator, keep func(target int) bool) *answered {
	a := &answered{at: map[string]time.Time{}}
	g.onSuccess = func(ev sentEvent, at time.Time) {
		if keep != nil && !keep(ev.target) {
			return
		}
		a.mu.Lock()
		if _, ok := a.at[ev.eventID]; !ok {
			a.at[ev.eventID] = at
		}
		a.mu.Unlock()
	}
	return a
}

func (a *answered) ids() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.at))
	for id := range a.at {
		ids = append(ids, id)
	}
	return ids
}

// receiver is the endpoints in the bench process: it drains the body,
// answers 204 (after delay, if any) and records each event's first
// arrival by its ce-id. It listens on an address per endpoint, as
// tenants' endpoints are each on their own host: the deliverer keeps at
// most eight idle connections to one address, and endpoints sharing one
// would make it dial again and again.
type receiver struct {
	srv               *http.Server
	urls              []string
	requests, repeats atomic.Int64

	mu      sync.Mutex
	arrived map[string]time.Time
}

func newReceiver(delay time.Duration, addresses int) (*receiver, error) {
	rc := &receiver{arrived: map[string]time.Time{}}
	rc.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		rc.arrive(r.Header.Get("ce-id"), at)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	for range addresses {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			rc.close()
			return nil, err
		}
		rc.urls = append(rc.urls, "http://"+ln.Addr().String())
		go func() { _ = rc.srv.Serve(ln) }()
	}
	return rc, nil
}

// arrive records one delivery of the event ce-id (the CloudEvents id
// every kind of target carries), arrived at at.
func (rc *receiver) arrive(ceID string, at time.Time) {
	rc.requests.Add(1)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if _, ok := rc.arrived[ceID]; ok {
		rc.repeats.Add(1)
	} else {
		rc.arrived[ceID] = at
	}
}

// url is the address of endpoint i.
func (rc *receiver) url(i int) string { return rc.urls[i%len(rc.urls)] }

func (rc *receiver) close() { _ = rc.srv.Close() }

// waitAll waits until every one of ids arrived, or until none arrived
// for stall (a delivery that never comes must not hang the bench: it is
// reported), and returns how many did not.
func (rc *receiver) waitAll(ctx context.Context, ids []string, stall time.Duration) (missing int, err error) {
	last, progressed := -1, time.Now()
	for {
		rc.mu.Lock()
		missing = 0
		for _, id := range ids {
			if _, ok := rc.arrived[id]; !ok {
				missing++
			}
		}
		rc.mu.Unlock()
		if missing != last {
			last, progressed = missing, time.Now()
		}
		if missing == 0 || time.Since(progressed) > stall {
			return missing, nil
		}
		select {
		case <-ctx.Done():
			return missing, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// latencies waits for every event a answered to arrive and returns 2xx ->
// arrival for each that did, and how many did not.
func (rc *receiver) latencies(ctx context.Context, a *answered, stall time.Duration) (result, int, error) {
	missing, err := rc.waitAll(ctx, a.ids(), stall)
	if err != nil {
		return result{}, 0, err
	}
	var lat result
	rc.mu.Lock()
	defer rc.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, at := range a.at {
		if got, ok := rc.arrived[id]; ok {
			lat.latencies = append(lat.latencies, got.Sub(at))
		}
	}
	if len(lat.latencies) == 0 {
		return result{}, 0, fmt.Errorf("no event accepted arrived at its endpoint")
	}
	return lat, missing, nil
}

// deliveryTables are the tables a delivery's life writes, today's and the
// queue of before (each build measured writes those it has).
var deliveryTables = []string{"deliveries", "pending_deliveries", "delivery_attempts", "delivery_marks", "delivery_redos", "delivery_minutes"}

// tableOps is one table's row operations: inserted, updated (of them
// heap-only) and deleted.
type tableOps struct{ ins, upd, hot, del float64 }

// rowOps is what the destinations' tables counted, by table
// (pg_stat_user_tables).
type rowOps map[string]tableOps

// deliveryRowOps reads the destinations' tables' row counts so far.
func (b *bench) deliveryRowOps(ctx context.Context) (rowOps, error) {
	rows, err := b.pool.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
		FROM pg_stat_user_tables WHERE schemaname = 'public' AND relname = ANY($1)`, deliveryTables)
	if err != nil {
		return nil, fmt.Errorf("read the deliveries' row counts: %w", err)
	}
	defer rows.Close()
	out := rowOps{}
	for rows.Next() {
		var (
			name string
			t    tableOps
		)
		if err := rows.Scan(&name, &t.ins, &t.upd, &t.hot, &t.del); err != nil {
			return nil, fmt.Errorf("read the deliveries' row counts: %w", err)
		}
		out[name] = t
	}
	return out, rows.Err()
}

// settledRowOps reads the counts once every backend reported its own. A
// backend reports what it counted when it goes idle, or, when it reported
// less than a second before, 10 s after going idle (PostgreSQL's
// PGSTAT_IDLE_INTERVAL): the counts are read until two reads 11 s apart
// agree.
func (b *bench) settledRowOps(ctx context.Context) (rowOps, error) {
	last, err := b.deliveryRowOps(ctx)
	if err != nil {
		return nil, err
	}
	for range 10 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(11 * time.Second):
		}
		now, err := b.deliveryRowOps(ctx)
		if err != nil {
			return nil, err
		}
		if now.ops() == last.ops() {
			return now, nil
		}
		last = now
	}
	return last, nil
}

// since is what was counted after before.
func (r rowOps) since(before rowOps) rowOps {
	out := rowOps{}
	for name, t := range r {
		p := before[name]
		out[name] = tableOps{ins: t.ins - p.ins, upd: t.upd - p.upd, hot: t.hot - p.hot, del: t.del - p.del}
	}
	return out
}

// ops is every row inserted, updated or deleted.
func (r rowOps) ops() float64 {
	var n float64
	for _, t := range r {
		n += t.ins + t.upd + t.del
	}
	return n
}

// hotShare is the share of the deliveries' updates that were heap-only (no
// new index entry): 1 when none was made.
func (r rowOps) hotShare() float64 {
	d := r["deliveries"]
	if d.upd == 0 {
		return 1
	}
	return d.hot / d.upd
}

// perDelivery says each table's operations per delivery, for the log.
func (r rowOps) perDelivery(deliveries float64) string {
	var parts []string
	for _, name := range deliveryTables {
		t, ok := r[name]
		if !ok || t.ins+t.upd+t.del == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s: %.2f inserted, %.2f updated, %.2f deleted", name, t.ins/deliveries, t.upd/deliveries, t.del/deliveries))
	}
	return strings.Join(parts, "; ")
}
