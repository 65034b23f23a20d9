package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// The upgrade run (CHAOS_UPGRADE=1 make chaos): the previous release
// (dev/upgrade/PREVIOUS, built once by dev/upgrade/previous.sh) runs every
// stage under a steady load from several tenants (two ingest instances
// behind a load balancer, a relay and its standby, two consumers, a
// deliverer); the working tree's `sluice migrate` applies the new
// migrations while it runs; each process is then replaced, one at a time,
// by the working tree's build in the order docs/upgrading.md gives (relay
// standby, relay leader, consumers, ingest, deliverer); a migration that
// locks the inbox is applied under 1,000 events/s (drill.go); and, when
// CHANGELOG.md's newest section says a rollback is safe, each process is
// replaced again by the previous release's binary, on the new schema. The
// run's checks judge it, with two more kept while it runs: the slot and
// the consumer groups' offsets never go back (continuity.go).
const (
	causeUpgrade  = "upgrade"
	causeRollback = "rollback"
)

// upgrade is the upgrade run's state.
type upgrade struct {
	c         *chaos
	previous  string // the previous release's binary
	current   string // the working tree's
	changelog string

	mu      sync.Mutex
	figures upgradeFigures
}

// upgradeFigures is what the report says of the upgrade.
type upgradeFigures struct {
	Previous       string         `json:"previous_release"`
	SchemaFrom     int64          `json:"schema_from"`
	SchemaTo       int64          `json:"schema_to"`
	Migration      migrationRun   `json:"migration"`
	Steps          []string       `json:"steps"`
	Rollback       string         `json:"rollback"`
	Sent           int            `json:"events_sent"`
	AcceptedDuring int            `json:"accepted_during_upgrade"`
	Refused        map[string]int `json:"refused_by_status"`
	Retried        int            `json:"refused_then_accepted"`
	LongestMS      int64          `json:"longest_refusal_ms"`
	DurationS      float64        `json:"upgrade_s"`
	SlotChecks     int            `json:"slot_checks"`
	OffsetChecks   int            `json:"offset_checks"`
	Drill          drillFigures   `json:"lock_drill"`
}

// migrationRun is what `sluice migrate -o json` said.
type migrationRun struct {
	From      int64   `json:"from"`
	To        int64   `json:"to"`
	Applied   []int64 `json:"applied"`
	Retries   int     `json:"lock_retries"`
	StalledMS int64   `json:"stalled_ms"`
	TookMS    int64   `json:"took_ms"`
}

func newUpgrade(root string, c *chaos) (*upgrade, error) {
	previous := os.Getenv("CHAOS_PREVIOUS_BIN")
	if previous == "" {
		return nil, fmt.Errorf("CHAOS_UPGRADE=1 needs CHAOS_PREVIOUS_BIN, the previous release's binary (dev/chaos.sh builds it with dev/upgrade/previous.sh)")
	}
	commit, err := os.ReadFile(filepath.Join(root, "dev/upgrade/PREVIOUS"))
	if err != nil {
		return nil, err
	}
	u := &upgrade{c: c, previous: previous, current: filepath.Join(root, "bin/sluice"), changelog: filepath.Join(root, "CHANGELOG.md")}
	for _, line := range strings.Split(string(commit), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			u.figures.Previous = line
		}
	}
	return u, nil
}

// migratePrevious makes the run's database as the previous release would:
// its own `sluice migrate`.
func (u *upgrade) migratePrevious(ctx context.Context, dbURL string) error {
	cmd := exec.CommandContext(ctx, u.previous, "migrate")
	cmd.Env = append(os.Environ(), "SLUICE_DATABASE_URL="+dbURL, "SLUICE_LOG_LEVEL=warn")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("the previous release's sluice migrate: %w: %s", err, out)
	}
	return nil
}

// exerciseUpgrade sends a steady load while the upgrade runs: the plan's
// deliveries, then fresh invoices at the same pace until the last step is
// done, then the refunds.
func (c *chaos) exerciseUpgrade(ctx context.Context) error {
	const rate = 10.0 // deliveries per second
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.upgrade.run(ctx)
	}()
	c.sender.run(ctx, c.plan.deliveries, 8, rate)
	c.keepSending(ctx, done, rate)
	<-done
	c.sender.run(ctx, c.plan.refunds, 8, 50)
	return ctx.Err()
}

// keepSending sends a fresh eligible invoice every 1/rate s until done.
func (c *chaos) keepSending(ctx context.Context, done chan struct{}, rate float64) {
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for n := 0; ; n++ {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tn := c.tenants[n%len(c.tenants)]
		id := fmt.Sprintf("in_steady_%d", n)
		ev := "evt_" + id
		inv := &invoice{src: tn.stripe, id: id, customer: tn.customers[n%len(tn.customers)], amount: 2000, mapped: true, paidIDs: []string{ev}}
		c.mu.Lock()
		c.plan.invoices[tn.stripe.id+"/"+id] = inv
		c.mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.sender.deliver(ctx, stripeDelivery(tn.stripe, ev, invoicePaidBody(ev, id, inv.customer, inv.amount)))
		}()
	}
}

// run is the upgrade itself, under the load: migrate, replace each
// process, drill, roll back.
func (u *upgrade) run(ctx context.Context) {
	c := u.c
	c.wait(ctx, 8000, 2000) // the previous release under load a while first
	began := time.Now()
	c.sender.during.Store(true)
	watch := c.watchContinuity(ctx)
	if err := u.migrate(ctx); err != nil {
		c.violate("upgrade: %v", err)
		c.sender.during.Store(false)
		watch.stop()
		return
	}
	u.replaceAll(ctx, u.current, causeUpgrade)
	c.drill(ctx)
	if safe, why := rollbackSafe(u.changelog); safe {
		u.replaceAll(ctx, u.previous, causeRollback)
		u.figures.Rollback = "done: " + why
	} else {
		u.figures.Rollback = "skipped: " + why
	}
	c.sender.during.Store(false)
	u.figures.DurationS = time.Since(began).Seconds()
	u.figures.SlotChecks, u.figures.OffsetChecks = watch.stop()
}

// migrate runs the working tree's `sluice migrate` while the previous
// release runs.
func (u *upgrade) migrate(ctx context.Context) error {
	began := time.Now()
	cmd := exec.CommandContext(ctx, u.current, "migrate", "-o", "json")
	cmd.Env = append(os.Environ(), u.c.fleet.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	_ = os.WriteFile(filepath.Join(u.c.fleet.logDir, "migrate.log"), append(out, stderr.Bytes()...), 0o644)
	if err != nil {
		return fmt.Errorf("sluice migrate: %w: %s", err, stderr.String())
	}
	var m migrationRun
	if err := json.Unmarshal(out, &m); err != nil {
		return fmt.Errorf("sluice migrate -o json: %w: %s", err, out)
	}
	m.TookMS = time.Since(began).Milliseconds()
	u.mu.Lock()
	u.figures.Migration, u.figures.SchemaFrom, u.figures.SchemaTo = m, m.From, m.To
	u.mu.Unlock()
	u.c.log.Info("migrated under load", slog.Int64("from", m.From), slog.Int64("to", m.To), slog.Int("lock_retries", m.Retries))
	return nil
}

// replaceAll replaces every process by bin, one at a time: the relay's
// standby, then its leader (the standby, replaced, takes over), the
// consumers, ingest, the deliverer; a rollback goes the other way but for
// the relays (their standby first again: it avoids a second handover).
func (u *upgrade) replaceAll(ctx context.Context, bin, cause string) {
	c := u.c
	order := []string{"relay standby", "relay leader", "consume-a", "consume-b", "ingest-a", "ingest-b", "deliver-a"}
	if cause == causeRollback {
		order = []string{"deliver-a", "ingest-b", "ingest-a", "consume-b", "consume-a", "relay standby", "relay leader"}
	}
	for _, step := range order {
		name := step
		if strings.HasPrefix(step, "relay") {
			var err error
			if name, err = u.nextRelay(ctx, bin); err != nil {
				c.violate("%s, %s: %v", cause, step, err)
				return
			}
		}
		if err := u.replace(ctx, name, bin, cause); err != nil {
			c.violate("%s of %s: %v", cause, name, err)
			return
		}
		c.wait(ctx, 2000, 1000) // old and new side by side under load a while
	}
}

// nextRelay is the relay to replace next: one not running bin yet, the
// standby rather than the leader (leadership may have moved meanwhile: it
// is read now).
func (u *upgrade) nextRelay(ctx context.Context, bin string) (string, error) {
	c := u.c
	leader, err := c.leader(ctx)
	if err != nil {
		return "", err
	}
	var pending []string
	c.fleet.mu.Lock()
	for _, r := range c.relays {
		if c.fleet.specs[r].bin != bin {
			pending = append(pending, r)
		}
	}
	c.fleet.mu.Unlock()
	if len(pending) == 0 {
		return "", fmt.Errorf("every relay runs %s already", bin)
	}
	for _, r := range pending {
		if r != leader {
			return r, nil
		}
	}
	return pending[0], nil
}

// replace stops one process (SIGTERM) and starts it from bin; the
// consumer groups settle before the next step, so each replacement's
// rebalances are counted in its window.
func (u *upgrade) replace(ctx context.Context, name, bin, cause string) error {
	c := u.c
	members, _, err := c.membership(ctx)
	if err != nil {
		return err
	}
	began := time.Now()
	w := &window{cause: cause, target: name, from: began}
	c.mu.Lock()
	c.windows = append(c.windows, w)
	c.mu.Unlock()
	ready := "/readyz"
	if slices.Contains(c.relays, name) {
		ready = "/healthz" // it starts as the standby
	}
	err = c.fleet.replace(ctx, name, bin, ready)
	w.allowed = c.allowance(w)
	if err != nil {
		return err
	}
	if slices.Contains(c.relays, name) {
		if _, err := c.leader(ctx); err != nil {
			return err
		}
	}
	if err := c.settle(ctx, members, slices.Contains(c.consumers, name)); err != nil {
		c.violate("after the %s of %s: %v", cause, name, err)
	}
	release := "the working tree"
	if bin == u.previous {
		release = "the previous release"
	}
	step := fmt.Sprintf("%s: %s now runs %s (%.1f s)", cause, name, release, time.Since(began).Seconds())
	u.mu.Lock()
	u.figures.Steps = append(u.figures.Steps, step)
	u.mu.Unlock()
	c.log.Info("replaced", slog.String("step", step))
	return nil
}

// rollbackSafe reads CHANGELOG.md's newest section (the release being
// tested): its "- **Rollback**: safe" line says the previous release's
// binaries run on its schema.
func rollbackSafe(changelog string) (bool, string) {
	f, err := os.Open(changelog)
	if err != nil {
		return false, err.Error()
	}
	defer f.Close()
	heading := regexp.MustCompile(`^## (.+)`)
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := heading.FindStringSubmatch(line); m != nil {
			if section != "" {
				break // only the newest section counts
			}
			section = m[1]
			continue
		}
		if section != "" && strings.HasPrefix(line, "- **Rollback**:") {
			verdict := strings.TrimSpace(strings.TrimPrefix(line, "- **Rollback**:"))
			return strings.HasPrefix(verdict, "safe"), fmt.Sprintf("CHANGELOG.md (%s) says %q", section, firstSentence(verdict))
		}
	}
	return false, fmt.Sprintf("CHANGELOG.md's newest section (%s) says nothing of a rollback", section)
}

func firstSentence(s string) string {
	if i := strings.IndexAny(s, ".;"); i > 0 {
		return s[:i]
	}
	return s
}

// fillUpgrade copies the sender's figures into the report.
func (r *report) fillUpgrade(u *upgrade, s *sender) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	f := u.figures
	f.Sent, f.AcceptedDuring, f.Retried, f.LongestMS = s.refusal.sent, s.refusal.acceptedDuring, s.refusal.retried, s.refusal.longest.Milliseconds()
	f.Refused = map[string]int{}
	for st, n := range s.refusal.answers {
		key := fmt.Sprint(st)
		if st == 0 {
			key = "no_answer"
		}
		f.Refused[key] = n
	}
	r.Upgrade = &f
}
