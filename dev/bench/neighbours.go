package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/dev/procfs"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// The neighbours step (issue 33): ten tenants at 50 events/s each, their
// 2xx -> grant p99 measured in windows alternating between alone and
// beside one other tenant doing harm of one kind: (a) holding a lock on
// one of its balance rows, (b) sending events that dead-letter, (c)
// sending at its full ingest rate, (d) sending 25 MiB GitHub pushes.

const (
	neighbourTen  = 10
	neighbourRate = 50 // events/s per tenant of the ten
	// neighbourTenantRate is the deployment's default --tenant-rate: the
	// flood (c) is what one tenant may send.
	neighbourTenantRate = 1000
)

// neighbourWorld is the step's tenants.
type neighbourWorld struct {
	p      *proc
	ten    []benchSource
	tenIDs []string
	x      benchSource // the neighbour, its customers mapped
	// spread are ten more tenants: the flood's volume sent by them, the
	// control that tells one tenant's volume from the machine's load.
	spread    []benchSource
	floodRate float64     // what the flood was accepted at, events/s
	poison    benchSource // the neighbour's source again, customers mapped to no workspace
	github    benchSource // the neighbour's GitHub source
	lockWS    string      // the workspace whose balance row (a) locks
	lockCus   string
	lockEv    string // the event of that workspace sent as the lock began
	// beyondAccepted and beyondRefused are what each beyond window's
	// neighbour was accepted and refused at, requests/s.
	beyondAccepted, beyondRefused []float64
}

type neighbourCase struct {
	key, name string
	// during runs while the ten's window is paced; it returns once the
	// harm is over (a lock released, a flood sent).
	during func(ctx context.Context, w *neighbourWorld, window time.Duration) error
}

func (b *bench) neighbours(ctx context.Context) error {
	w, err := b.neighbourWorld(ctx)
	if err != nil {
		return err
	}
	defer w.p.terminate()
	cases := []neighbourCase{
		{"lock", "(a) a balance row locked 30 s", b.neighbourLock},
		{"poison", "(b) events that dead-letter", b.neighbourPoison},
		{"flood", "(c) its full ingest rate", b.neighbourFlood},
		{"spread", "(c, control) the flood's volume spread over ten other tenants", b.neighbourSpread},
		{"beyond", "(c, beyond) sending as fast as ingest answers, mostly 429", b.neighbourBeyond},
		{"pushes", "(d) 25 MiB GitHub pushes at 1/s", b.neighbourPushes},
	}
	// BENCH_NEIGHBOURS=lock,poison runs some cases (an A/B of one change).
	only := map[string]bool{}
	for _, k := range strings.Split(os.Getenv("BENCH_NEIGHBOURS"), ",") {
		if k != "" {
			only[k] = true
		}
	}
	for _, c := range cases {
		if len(only) > 0 && !only[c.key] {
			continue
		}
		var alone, with, samePart []float64
		var legsAlone, legsWith []legs
		var busyAlone, busyWith []float64
		deadBefore, err := b.neighbourDead(ctx, w)
		if err != nil {
			return err
		}
		for round := range neighbourRounds(b.runs()) {
			for _, harm := range abba(round) {
				win, err := b.neighbourWindow(ctx, w, c, harm)
				if err != nil {
					return fmt.Errorf("%s: %w", c.key, err)
				}
				if harm {
					legsWith, busyWith = append(legsWith, win.legs), append(busyWith, win.busy)
					with = append(with, win.p99)
					if win.samePartP99 > 0 {
						samePart = append(samePart, win.samePartP99)
					}
				} else {
					legsAlone, busyAlone = append(legsAlone, win.legs), append(busyAlone, win.busy)
					alone = append(alone, win.p99)
				}
			}
		}
		deadAfter, err := b.neighbourDead(ctx, w)
		if err != nil {
			return err
		}
		dead := deadAfter - deadBefore
		key := "neighbours_" + c.key
		b.results[key+"_p99_ms_alone"] = median(alone)
		b.results[key+"_p99_ms_with"] = median(with)
		b.results[key+"_p99_ratio"] = median(with) / median(alone)
		b.results[key+"_dead_lettered"] = float64(dead)
		b.results[key+"_machine_busy_alone"] = median(busyAlone)
		b.results[key+"_machine_busy_with"] = median(busyWith)
		for name, ls := range map[string][]legs{"alone": legsAlone, "with": legsWith} {
			var produce, effect []float64
			for _, l := range ls {
				produce, effect = append(produce, l.relayP99), append(effect, l.consumeP99)
			}
			b.results[key+"_produce_p99_ms_"+name] = median(produce)
			b.results[key+"_effect_p99_ms_"+name] = median(effect)
		}
		if len(samePart) > 0 {
			b.results[key+"_same_partition_p99_ms"] = median(samePart)
		}
		b.note("neighbours %s: the ten's p99 alone %.1f ms, with %.1f ms (ratio %.2f, target <= 1.5); the ten's events dead-lettered: %d (target 0)",
			c.name, median(alone), median(with), median(with)/median(alone), dead)
	}
	if len(w.beyondAccepted) > 0 {
		b.results["neighbours_beyond_accepted_per_s"] = median(w.beyondAccepted)
		b.results["neighbours_beyond_refused_per_s"] = median(w.beyondRefused)
	}
	if flood, ok := b.results["neighbours_flood_p99_ms_with"]; ok {
		if spread, ok := b.results["neighbours_spread_p99_ms_with"]; ok && spread > 0 {
			b.results["neighbours_flood_over_spread"] = flood / spread
			b.note("neighbours flood against the same volume spread over ten tenants: the ten's p99 %.1f ms against %.1f ms (ratio %.2f: what one tenant's volume costs beyond the load)",
				flood, spread, flood/spread)
		}
	}
	b.neighbourTable()
	return nil
}

// neighbourTable prints the step's figures as the table docs/performance.md
// keeps.
func (b *bench) neighbourTable() {
	var sb strings.Builder
	sb.WriteString("\n| neighbour | ten's p99 alone (ms) | with (ms) | ratio | ten's dead-lettered | ten's on the locked partition, p99 (ms) | 2xx->Kafka p99 alone / with | Kafka->grant p99 alone / with | machine CPU busy alone / with |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, k := range []string{"lock", "poison", "flood", "spread", "beyond", "pushes"} {
		key := "neighbours_" + k
		if _, ok := b.results[key+"_p99_ms_alone"]; !ok {
			continue
		}
		same := "-"
		if v, ok := b.results[key+"_same_partition_p99_ms"]; ok {
			same = format(v)
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %.0f | %s | %s / %s | %s / %s | %.0f%% / %.0f%% |\n", k, format(b.results[key+"_p99_ms_alone"]), format(b.results[key+"_p99_ms_with"]),
			format(b.results[key+"_p99_ratio"]), b.results[key+"_dead_lettered"], same,
			format(b.results[key+"_produce_p99_ms_alone"]), format(b.results[key+"_produce_p99_ms_with"]),
			format(b.results[key+"_effect_p99_ms_alone"]), format(b.results[key+"_effect_p99_ms_with"]),
			100*b.results[key+"_machine_busy_alone"], 100*b.results[key+"_machine_busy_with"])
	}
	log.Print(sb.String())
	b.notes = append(b.notes, "neighbours table:"+sb.String())
}

func (b *bench) neighbourWorld(ctx context.Context) (*neighbourWorld, error) {
	w := &neighbourWorld{}
	var err error
	if w.ten, err = b.newSources(ctx, "nb"+b.run, neighbourTen); err != nil {
		return nil, err
	}
	for _, s := range w.ten {
		w.tenIDs = append(w.tenIDs, s.tenantID)
	}
	if w.spread, err = b.newSources(ctx, "nbs"+b.run, neighbourTen); err != nil {
		return nil, err
	}
	xs, err := b.newSources(ctx, "nbx"+b.run, 1)
	if err != nil {
		return nil, err
	}
	w.x = xs[0]
	w.poison = w.x
	w.poison.customers = nil
	for i := range 100 {
		w.poison.customers = append(w.poison.customers, fmt.Sprintf("cus_nobody_%s_%d", b.run, i))
	}
	w.github = benchSource{tenantID: w.x.tenantID, account: "nbx-github-" + b.run, secret: "ghsecret-" + b.run}
	if w.github.sourceID, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: w.x.tenantID, Kind: "github",
		Account: w.github.account, Secret: w.github.secret}); err != nil {
		return nil, err
	}
	// The topics exist before the consumers start (as for the steps
	// before it, when they run).
	if err := b.createTopics(ctx); err != nil {
		return nil, err
	}
	env := append(b.sluiceEnv(b.stageAddr, b.slot("neighbours")),
		fmt.Sprintf("SLUICE_TENANT_RATE=%d", neighbourTenantRate), fmt.Sprintf("SLUICE_TENANT_BURST=%d", 2*neighbourTenantRate),
		fmt.Sprintf("SLUICE_MAX_BODY_BYTES=%d", 26<<20))
	if w.p, err = start("sluice-serve", b.bin, []string{"serve"}, env, b.stageAddr, b.adminAddr, "/readyz/stages", b.outDir); err != nil {
		return nil, err
	}
	b.opsAddr = w.p.ops
	// The locked row: one customer of the neighbour's, granted once so its
	// balance row exists.
	w.lockCus = w.x.customers[0]
	if err := b.pool.QueryRow(ctx, `SELECT workspace_id FROM workspace_customers WHERE tenant_id = $1 AND customer_id = $2`, w.x.tenantID, w.lockCus).Scan(&w.lockWS); err != nil {
		return nil, fmt.Errorf("the locked workspace: %w", err)
	}
	one := w.x
	one.customers = []string{w.lockCus}
	g := b.generatorOf(b.stageAddr, 1, []benchSource{one})
	// Sent again until one is granted: the relay's slot may be made after
	// the stage answers ready, and a row written before it is never read.
	last := time.Time{}
	if err := waitFor(ctx, 3*time.Minute, "the locked workspace's balance row", func() (bool, error) {
		if time.Since(last) > 5*time.Second {
			if status, err := g.send(ctx, g.next()); err != nil || status/100 != 2 {
				return false, fmt.Errorf("a grant of the locked workspace: %d %v", status, err)
			}
			last = time.Now()
		}
		var n int
		err := b.pool.QueryRow(ctx, `SELECT count(*) FROM balances WHERE workspace_id = $1`, w.lockWS).Scan(&n)
		return n > 0, err
	}); err != nil {
		return nil, err
	}
	return w, nil
}

// neighbourWin is one window's figures.
type neighbourWin struct {
	p99         float64 // the ten's 2xx -> grant, ms (the locked partition's apart)
	samePartP99 float64 // the ten's on the locked resource's partition, (a) only
	dead        int     // the ten's events dead-lettered
	legs        legs    // the ten's 2xx -> grant split where it entered Kafka
	busy        float64 // the machine's CPUs busy over the window, 0-1, whoever ran
}

// neighbourWindow paces the ten for a window, the neighbour's harm beside
// them when harm, and waits for every accepted event's grant.
func (b *bench) neighbourWindow(ctx context.Context, w *neighbourWorld, c neighbourCase, harm bool) (neighbourWin, error) {
	if err := b.waitNeighbourQuiet(ctx); err != nil {
		return neighbourWin{}, err
	}
	window := b.neighbourWindowLen()
	began := time.Now()
	g := b.generatorOf(b.stageAddr, 2*conns, w.ten)
	// Every event its own invoice: each accepted one makes one grant.
	g.dupShare, g.sameInv = 0, 0
	ans := track(g, nil)
	var wg sync.WaitGroup
	var harmErr error
	if harm {
		wg.Add(1)
		go func() { defer wg.Done(); harmErr = c.during(ctx, w, window) }()
		time.Sleep(time.Second) // the harm under way before the window
	}
	busy0, all0 := procfs.Machine()
	r := g.paced(neighbourTen*neighbourRate, 2*conns, window)
	busy1, all1 := procfs.Machine()
	wg.Wait()
	if harmErr != nil {
		return neighbourWin{}, harmErr
	}
	lat, err := b.neighbourGrants(ctx, w, ans, c.key == "lock" && harm)
	if err != nil {
		return neighbourWin{}, err
	}
	if all1 > all0 {
		lat.busy = float64(busy1-busy0) / float64(all1-all0)
	}
	if lat.dead, err = b.neighbourDead(ctx, w); err != nil {
		return lat, err
	}
	if lat.legs, err = b.neighbourLegs(ctx, began, ans); err != nil {
		return lat, err
	}
	log.Printf("neighbours %s, %s: the ten %.0f accepted/s, %d errors, %d rejected; p99 %.1f ms (locked partition's %.1f ms); %s; machine CPU busy %.0f%%; dead-lettered so far %d",
		c.key, map[bool]string{false: "alone", true: "with the neighbour"}[harm], r.rate(), r.errors, r.rejected, lat.p99, lat.samePartP99, lat.legs, 100*lat.busy, lat.dead)
	return lat, nil
}

// neighbourLegs splits the ten's latency of a window into its legs: where
// a neighbour's harm makes the ten wait (the relay, or Kafka and the
// consumers).
func (b *bench) neighbourLegs(ctx context.Context, began time.Time, ans *answered) (legs, error) {
	adm, done, err := b.admin()
	if err != nil {
		return legs{}, err
	}
	defer done()
	ans.mu.Lock()
	answeredAt := maps.Clone(ans.at)
	ans.mu.Unlock()
	got, err := b.grantsOf(ctx, slices.Collect(maps.Keys(answeredAt)))
	if err != nil {
		return legs{}, err
	}
	effects := make(map[string]time.Time, len(got))
	for id, g := range got {
		effects[id] = g.at
	}
	return b.legs(ctx, adm, began, answeredAt, effects)
}

// neighbourRounds is the rounds of each case: BENCH_NEIGHBOURS_ROUNDS when
// set (medians of more alternating rounds in quick mode's windows), else
// the mode's.
func neighbourRounds(mode int) int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_NEIGHBOURS_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return mode
}

func (b *bench) neighbourWindowLen() time.Duration {
	return pick(b.quick, 10*time.Second, 20*time.Second)
}

// waitNeighbourQuiet waits for the credits group to have applied everything
// (a poison flood drains after its window).
func (b *bench) waitNeighbourQuiet(ctx context.Context) error {
	adm, done, err := b.admin()
	if err != nil {
		return err
	}
	defer done()
	return b.waitConsumed(ctx, adm, 15*time.Minute)
}

// neighbourGrants reads each accepted event's grant, waiting for all of
// them, and the p99 of 2xx -> grant; with apart, the ten's events on the
// locked workspace's partition are counted apart.
func (b *bench) neighbourGrants(ctx context.Context, w *neighbourWorld, ans *answered, apart bool) (neighbourWin, error) {
	ids := ans.ids()
	if apart {
		ids = append(ids, w.lockEv) // waited for too: its partition is the one apart
	}
	var got map[string]grantAt
	err := waitFor(ctx, 5*time.Minute, "the ten's grants", func() (bool, error) {
		var err error
		got, err = b.grantsOf(ctx, ids)
		return len(got) >= len(ids), err
	})
	if err != nil {
		return neighbourWin{}, fmt.Errorf("%d of %d grants: %w", len(got), len(ids), err)
	}
	lockPart := int32(-1)
	if apart {
		lockPart = got[w.lockEv].partition
		delete(got, w.lockEv)
	}
	var all, same result
	ans.mu.Lock()
	for id, g := range got {
		d := g.at.Sub(ans.at[id])
		if g.partition == lockPart {
			same.latencies = append(same.latencies, d)
			continue
		}
		all.latencies = append(all.latencies, d)
	}
	ans.mu.Unlock()
	return neighbourWin{p99: ms(all.percentile(0.99)), samePartP99: ms(same.percentile(0.99))}, nil
}

type grantAt struct {
	at        time.Time
	partition int32
}

func (b *bench) grantsOf(ctx context.Context, ids []string) (map[string]grantAt, error) {
	rows, err := b.pool.Query(ctx, `SELECT event_id, processed_at, kafka_partition FROM credit_grants WHERE event_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got := map[string]grantAt{}
	for rows.Next() {
		var id string
		var g grantAt
		if err := rows.Scan(&id, &g.at, &g.partition); err != nil {
			return nil, err
		}
		got[id] = g
	}
	return got, rows.Err()
}

// neighbourDead counts the ten's dead letters (none is the target).
func (b *bench) neighbourDead(ctx context.Context, w *neighbourWorld) (int, error) {
	var n int
	err := b.pool.QueryRow(ctx, `SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = ANY($1)`, w.tenIDs).Scan(&n)
	return n, err
}

// neighbourLock holds a lock on the neighbour's balance row for 30 s while
// invoices of that workspace keep being paid, one every 0.2 s: each its own
// key, so they meet the lock on every partition. The first one's partition
// is the one whose figure is kept apart.
func (b *bench) neighbourLock(ctx context.Context, w *neighbourWorld, window time.Duration) error {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // the lock ends with it
	if _, err := tx.Exec(ctx, `SELECT credits FROM balances WHERE workspace_id = $1 FOR UPDATE`, w.lockWS); err != nil {
		return err
	}
	one := w.x
	one.customers = []string{w.lockCus}
	g := b.generatorOf(b.stageAddr, 1, []benchSource{one})
	g.dupShare, g.sameInv = 0, 0
	began := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for sent := 0; time.Since(began) < 30*time.Second; sent++ {
		ev := g.next()
		if status, err := g.send(ctx, ev); err != nil || status/100 != 2 {
			return fmt.Errorf("the locked workspace's invoice: %d %v", status, err)
		}
		if sent == 0 {
			w.lockEv = ev.eventID
		}
		<-tick.C
	}
	return tx.Rollback(ctx)
}

// neighbourPoison sends 5,000 events (quick: 1,000) over the window whose
// customers map to no workspace: each dead-letters.
func (b *bench) neighbourPoison(_ context.Context, w *neighbourWorld, window time.Duration) error {
	n := pick(b.quick, 1000, 5000)
	g := b.generatorOf(b.stageAddr, conns, []benchSource{w.poison})
	g.dupShare, g.sameInv = 0, 0
	r := g.paced(max(1, n*int(time.Second)/int(window)), conns, window)
	log.Printf("neighbours poison: %d accepted", r.ok)
	return nil
}

// neighbourFlood sends at the neighbour's full --tenant-rate for the
// window: everything it may send, nothing refused.
func (b *bench) neighbourFlood(_ context.Context, w *neighbourWorld, window time.Duration) error {
	g := b.generatorOf(b.stageAddr, conns, []benchSource{w.x})
	g.dupShare, g.sameInv = 0, 0
	r := g.paced(neighbourTenantRate, conns, window)
	w.floodRate = r.rate()
	log.Printf("neighbours flood: %.0f accepted/s, %d errors, %d rejected (429)", r.rate(), r.errors, r.rejected)
	return nil
}

// neighbourBeyond sends as fast as ingest answers the neighbour for the
// window, closed loop: its --tenant-rate accepted, the rest refused (429)
// after authentication, each refusal a verified signature's work.
func (b *bench) neighbourBeyond(_ context.Context, w *neighbourWorld, window time.Duration) error {
	g := b.generatorOf(b.stageAddr, conns, []benchSource{w.x})
	r := g.saturate(conns/4, window)
	w.beyondAccepted = append(w.beyondAccepted, r.rate())
	w.beyondRefused = append(w.beyondRefused, float64(r.rejected)/r.elapsed.Seconds())
	log.Printf("neighbours beyond its rate: %.0f accepted/s, %d rejected (429)", r.rate(), r.rejected)
	return nil
}

// neighbourSpread sends what the flood was accepted at (its last window;
// --tenant-rate when the flood did not run), spread over ten other
// tenants, each well within its own rate. The ten's p99 beside the flood
// over their p99 beside this is what one tenant's volume costs them beyond
// the load itself: the machine's share of the flood's ratio is this one's.
func (b *bench) neighbourSpread(_ context.Context, w *neighbourWorld, window time.Duration) error {
	rate := w.floodRate
	if rate <= 0 {
		rate = neighbourTenantRate
	}
	g := b.generatorOf(b.stageAddr, conns, w.spread)
	g.dupShare, g.sameInv = 0, 0
	r := g.paced(int(rate), conns, window)
	log.Printf("neighbours spread: %.0f accepted/s over %d tenants, %d errors, %d rejected", r.rate(), len(w.spread), r.errors, r.rejected)
	return nil
}

// neighbourPushes sends a 25 MiB GitHub push a second for the window. The
// credits group never reads them (they are not invoices): what the ten
// feel is ingest, the inbox, the relay and Kafka carrying them.
func (b *bench) neighbourPushes(ctx context.Context, w *neighbourWorld, window time.Duration) error {
	body := bytes.Repeat([]byte(" "), 25<<20)
	client := &http.Client{Timeout: time.Minute}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	end := time.Now().Add(window)
	ok := 0
	for i := 0; time.Now().Before(end); i++ {
		doc := fmt.Appendf(nil, `{"ref":"refs/heads/main","after":"%040d","pad":"`, i)
		doc = append(append(doc, body[:25<<20-len(doc)-2]...), `"}`...)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+b.stageAddr+"/v1/ingest/"+w.github.sourceID, bytes.NewReader(doc))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "push")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("nb-%s-%d", b.run, i))
		req.Header.Set("X-Hub-Signature-256", signature.SignGitHub(w.github.secret, doc))
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			ok++
		} else {
			log.Printf("neighbours push %d answered %d", i, resp.StatusCode)
		}
		<-tick.C
	}
	log.Printf("neighbours pushes: %d accepted", ok)
	return nil
}
