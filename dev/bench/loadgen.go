package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/internal/provider/signature"
)

// target is one source the generator signs for.
type target struct {
	url       string
	secret    string
	customers []string
	// types, when set, are the tenant's own event types the events are
	// sent as (BENCH_CATALOGUE_TRAFFIC), instead of invoice.paid.
	types []string
}

// generator sends Stripe-signed invoice.paid webhooks of about 1 KiB, like a
// provider would: a share of exact redeliveries (duplicates) and several
// event ids per invoice.
type generator struct {
	targets   []target
	client    *http.Client
	dupShare  float64 // share of requests that redeliver an earlier event
	sameInv   float64 // share of new events about an invoice already sent
	seq       atomic.Int64
	run       string
	recentMu  sync.Mutex
	recent    []sentEvent // ring of recent deliveries, for redeliveries
	onSuccess func(ev sentEvent, answeredAt time.Time)
}

type sentEvent struct {
	target  int
	eventID string
	invoice string
	body    []byte
	sig     string
}

func newGenerator(targets []target, conns int, run string) *generator {
	tr := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	return &generator{targets: targets, client: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		dupShare: 0.05, sameInv: 0.2, run: run, recent: make([]sentEvent, 0, 1024)}
}

var padding = strings.Repeat("x", 640)

// next builds the next delivery.
func (g *generator) next() sentEvent {
	if rand.Float64() < g.dupShare {
		g.recentMu.Lock()
		if n := len(g.recent); n > 0 {
			ev := g.recent[rand.IntN(n)]
			g.recentMu.Unlock()
			return ev
		}
		g.recentMu.Unlock()
	}
	n := g.seq.Add(1)
	ti := int(n) % len(g.targets)
	t := g.targets[ti]
	invoice := fmt.Sprintf("in_%s_%d", g.run, n)
	if rand.Float64() < g.sameInv && n > 10 {
		invoice = fmt.Sprintf("in_%s_%d", g.run, n-int64(len(g.targets))*int64(1+rand.IntN(3)))
	}
	typ := "invoice.paid"
	if len(t.types) > 0 {
		typ = t.types[rand.IntN(len(t.types))]
	}
	ev := g.event(ti, n, invoice, typ)
	g.recentMu.Lock()
	if len(g.recent) < cap(g.recent) {
		g.recent = append(g.recent, ev)
	} else {
		g.recent[rand.IntN(len(g.recent))] = ev
	}
	g.recentMu.Unlock()
	return ev
}

// event builds the delivery of event n, of type typ, to target ti.
func (g *generator) event(ti int, n int64, invoice, typ string) sentEvent {
	t := g.targets[ti]
	eventID := fmt.Sprintf("evt_%s_%d", g.run, n)
	customer := t.customers[rand.IntN(len(t.customers))]
	body := fmt.Appendf(nil, `{"id":%q,"object":"event","api_version":"2024-06-20","type":%q,"created":%d,`+
		`"livemode":false,"pending_webhooks":1,"data":{"object":{"id":%q,"object":"invoice","customer":%q,`+
		`"amount_paid":2000,"amount_due":2000,"currency":"usd","status":"paid","description":%q}}}`,
		eventID, typ, time.Now().Unix(), invoice, customer, padding)
	return sentEvent{target: ti, eventID: eventID, invoice: invoice, body: body,
		sig: signature.SignStripe(t.secret, body, time.Now())}
}

// everyType sends one event of each tenant's own type (BENCH_CATALOGUE_TRAFFIC)
// over conns connections and returns how many were answered 2xx: what a
// process does once per type after it starts, before the steady state the
// steps measure.
func (g *generator) everyType(conns int) (ok int64, err error) {
	due := make(chan sentEvent)
	var (
		wg    sync.WaitGroup
		count atomic.Int64
		fail  atomic.Value
	)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range due {
				status, err := g.send(context.Background(), ev)
				if err == nil && status/100 != 2 {
					err = fmt.Errorf("first event %s of a type answered %d", ev.eventID, status)
				}
				if err != nil {
					fail.CompareAndSwap(nil, err)
					continue
				}
				count.Add(1)
			}
		}()
	}
	for ti, t := range g.targets {
		for _, typ := range t.types {
			n := g.seq.Add(1)
			due <- g.event(ti, n, fmt.Sprintf("in_%s_%d", g.run, n), typ)
		}
	}
	close(due)
	wg.Wait()
	if e, _ := fail.Load().(error); e != nil {
		return count.Load(), e
	}
	return count.Load(), nil
}

func (g *generator) send(ctx context.Context, ev sentEvent) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.targets[ev.target].url, bytes.NewReader(ev.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(signature.StripeHeader, ev.sig)
	resp, err := g.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// result of one load run.
type result struct {
	sent, ok, rejected, errors int64
	elapsed                    time.Duration
	latencies                  []time.Duration // of 2xx answers
	slow                       []time.Time     // when requests answered after 100 ms were due
}

func (r result) rate() float64 { return float64(r.ok) / r.elapsed.Seconds() }

func (r result) percentile(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	l := slices.Clone(r.latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(float64(len(l))*p))]
}

// saturate sends as fast as conns concurrent clients can for d.
func (g *generator) saturate(conns int, d time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local result
			for ctx.Err() == nil {
				ev := g.next()
				t0 := time.Now()
				status, err := g.send(ctx, ev)
				if ctx.Err() != nil {
					break
				}
				local.record(status, err, time.Since(t0))
				if status/100 == 2 && g.onSuccess != nil {
					g.onSuccess(ev, time.Now())
				}
			}
			mu.Lock()
			res.merge(local)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

// pacedWarmup: the first seconds of a paced run open its connections at
// once and grow every side's buffers; requests due then are sent but not
// measured.
const pacedWarmup = 2 * time.Second

// paced sends at a fixed rate for d (open loop: latency counts from when a
// request was due, so a stall is not hidden by the generator waiting).
func (g *generator) paced(rate int, conns int, d time.Duration) result {
	// What earlier steps wrote would otherwise reach the disk in the
	// middle of this one: the kernel writes dirty pages back 30 s after
	// they were dirtied, all at once, and the WAL fsyncs of that second
	// then take up to a second (seen as IO:WALSync in pg_stat_activity).
	syscall.Sync()
	interval := time.Second / time.Duration(rate)
	due := make(chan time.Time, rate)
	var (
		mu  sync.Mutex
		res result
		wg  sync.WaitGroup
	)
	start := time.Now()
	measureFrom := start.Add(pacedWarmup)
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local result
			for at := range due {
				ev := g.next()
				status, err := g.send(context.Background(), ev)
				if at.Before(measureFrom) {
					continue
				}
				if status/100 == 2 && g.onSuccess != nil {
					g.onSuccess(ev, time.Now())
				}
				local.record(status, err, time.Since(at))
				if time.Since(at) > 100*time.Millisecond {
					local.slow = append(local.slow, at)
				}
			}
			mu.Lock()
			res.merge(local)
			mu.Unlock()
		}()
	}
	for i := 0; ; i++ {
		at := start.Add(time.Duration(i) * interval)
		if at.Sub(measureFrom) >= d {
			break
		}
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		due <- at
	}
	close(due)
	wg.Wait()
	res.elapsed = time.Since(measureFrom)
	return res
}

func (r *result) record(status int, err error, lat time.Duration) {
	r.sent++
	switch {
	case err != nil:
		r.errors++
	case status/100 == 2:
		r.ok++
		r.latencies = append(r.latencies, lat)
	default:
		r.rejected++
	}
}

func (r *result) merge(o result) {
	r.sent += o.sent
	r.ok += o.ok
	r.rejected += o.rejected
	r.errors += o.errors
	r.latencies = append(r.latencies, o.latencies...)
	r.slow = append(r.slow, o.slow...)
}
