package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// check reads Postgres (and the Kafka reader's view) directly and records
// every invariant that does not hold as a violation.
func (c *chaos) check(ctx context.Context) error {
	inbox, err := c.inboxKeys(ctx)
	if err != nil {
		return err
	}
	accepted := func(src *source, eventID string) bool { return inbox[eventKey(src, eventID)] }

	// Every 2xx has its inbox row.
	c.sender.mu.Lock()
	for k := range c.sender.accepted {
		if !inbox[k] {
			c.report.Lost++
			c.violate("answered 2xx but no inbox row: %s", k)
		}
	}
	c.report.Accepted = len(c.sender.accepted)
	for _, u := range c.sender.unserved {
		c.violate("legitimate delivery never accepted: %s", u)
	}
	for _, h := range c.sender.hostileOK {
		c.violate("hostile request accepted: %s", h)
	}
	c.sender.mu.Unlock()

	// No hostile request left a row; nothing quarantined or in conflict
	// (every redelivery is the same bytes, every body fits its schema).
	for _, q := range []struct{ what, sql string }{
		{"hostile inbox rows", `SELECT count(*) FROM inbox WHERE event_id LIKE 'evt_hostile_%'`},
		{"quarantined inbox rows", `SELECT count(*) FROM inbox WHERE status = 'quarantined'`},
		{"conflicts", `SELECT count(*) FROM inbox_conflicts`},
		{"parked outbox rows", `SELECT count(*) FROM cdc_parked`},
	} {
		var n int
		if err := c.pool.QueryRow(ctx, q.sql).Scan(&n); err != nil {
			return fmt.Errorf("%s: %w", q.what, err)
		}
		if n > 0 {
			c.violate("%d %s", n, q.what)
		}
	}
	if err := c.checkCredits(ctx, accepted); err != nil {
		return err
	}
	if err := c.checkProjections(ctx, accepted); err != nil {
		return err
	}
	if err := c.checkFeedback(ctx, accepted); err != nil {
		return err
	}
	return c.checkRSS()
}

func (c *chaos) inboxKeys(ctx context.Context) (map[string]bool, error) {
	rows, err := c.pool.Query(ctx, `SELECT source_id::text || '/' || source_account || '/' || event_id FROM inbox`)
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("inbox: %w", err)
	}
	set := make(map[string]bool, len(keys))
	for _, k := range keys {
		set[k] = true
	}
	return set, nil
}

// countBy runs a query returning (key, count) rows.
func (c *chaos) countBy(ctx context.Context, sql string) (map[string]int, error) {
	rows, err := c.pool.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	var k string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&k, &n}, func() error { out[k] += n; return nil })
	return out, err
}

// checkCredits: every eligible invoice exactly one grant, every refunded one
// exactly one reversal, every poison event dead-lettered with its reason and
// nothing else, each balance its grants minus its reversals.
func (c *chaos) checkCredits(ctx context.Context, accepted func(*source, string) bool) error {
	grants, err := c.countBy(ctx, `SELECT source_id::text || '/' || object_id, count(*) FROM credit_grants GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("grants: %w", err)
	}
	reversals, err := c.countBy(ctx, `SELECT source_id::text || '/' || object_id, count(*) FROM credit_reversals WHERE credits > 0 GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("reversals: %w", err)
	}
	letters, err := c.countBy(ctx, `SELECT headers->>'ce_id', count(*) FROM dead_letters WHERE reason <> '' GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("dead letters: %w", err)
	}
	wantLetters := map[string]bool{}
	for key, inv := range c.plan.invoices {
		var paid, refunded bool
		for _, id := range inv.paidIDs {
			paid = paid || accepted(inv.src, id)
		}
		for _, id := range inv.refundIDs {
			refunded = refunded || accepted(inv.src, id)
		}
		want := 0
		if paid && inv.mapped && inv.amount > 0 {
			want = 1
			c.report.EligibleInvoices++
		}
		if got := grants[key]; got != want {
			if got > want {
				c.report.DuplicateEffects += got - want
			}
			c.violate("invoice %s: %d grants, want %d", inv.id, got, want)
		}
		delete(grants, key)
		wantRev := 0
		if want == 1 && refunded {
			wantRev = 1
		}
		if got := reversals[key]; got != wantRev {
			if got > wantRev {
				c.report.DuplicateEffects += got - wantRev
			}
			c.violate("invoice %s: %d reversals, want %d", inv.id, got, wantRev)
		}
		if !inv.mapped {
			for _, id := range inv.paidIDs {
				if accepted(inv.src, id) {
					wantLetters[id] = true
				}
			}
		}
	}
	for key, n := range grants {
		c.violate("%d grants for %s, which the load never paid", n, key)
	}
	for id := range wantLetters {
		if letters[id] != 1 {
			c.violate("poison event %s: %d dead letters with a reason, want 1", id, letters[id])
		}
		delete(letters, id)
	}
	for id, n := range letters {
		c.violate("%d dead letters for %s, which is not poison", n, id)
	}
	c.report.DeadLetters = len(wantLetters)
	var off int
	err = c.pool.QueryRow(ctx, `
SELECT count(*) FROM workspaces w
LEFT JOIN balances b ON b.workspace_id = w.id
WHERE coalesce(b.credits, 0) <>
      coalesce((SELECT sum(credits) FROM credit_grants g WHERE g.workspace_id = w.id), 0)
    - coalesce((SELECT sum(credits) FROM credit_reversals r WHERE r.workspace_id = w.id), 0)`).Scan(&off)
	if err != nil {
		return fmt.Errorf("balances: %w", err)
	}
	if off > 0 {
		c.violate("%d balances differ from their grants minus reversals", off)
	}
	var waiting int
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM consumer_waiting`).Scan(&waiting); err != nil {
		return fmt.Errorf("records set aside: %w", err)
	}
	if waiting > 0 {
		c.violate("%d records are still set aside (consumer_waiting) with no lock held", waiting)
	}
	return nil
}

// supersedes is sluice_supersedes (migration 00004): the order of versions
// every projection keeps, written again here so the check does not trust
// the code it checks.
func supersedes(stored, next version) bool {
	newer := next.at.After(stored.at) || (next.at.Equal(stored.at) && next.eventID > stored.eventID)
	older := next.at.Before(stored.at) || (next.at.Equal(stored.at) && next.eventID < stored.eventID)
	switch {
	case stored.final && next.final:
		return older
	case stored.final:
		return false
	case next.final:
		return true
	default:
		return newer
	}
}

// checkProjections: each projection holds the newest accepted version sent.
func (c *chaos) checkProjections(ctx context.Context, accepted func(*source, string) bool) error {
	tables := map[string]struct{ id, state string }{
		"subscriptions":        {"subscription_id", "status"},
		"github_installations": {"installation_id", "state"},
		"verifications":        {"verification_id", "status"},
	}
	srcs := map[string]*source{}
	for _, t := range c.tenants {
		for _, s := range []*source{t.stripe, t.github, t.standard, t.mac} {
			srcs[s.id] = s
		}
	}
	for table, cols := range tables {
		rows, err := c.pool.Query(ctx, fmt.Sprintf(`SELECT source_id::text || '/' || %s, %s, version_event_id FROM %s`, cols.id, cols.state, table))
		if err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		got := map[string][2]string{}
		var k, state, ev string
		if _, err := pgx.ForEachRow(rows, []any{&k, &state, &ev}, func() error { got[k] = [2]string{state, ev}; return nil }); err != nil {
			return fmt.Errorf("%s: %w", table, err)
		}
		for key, versions := range c.plan.projections[table] {
			src := srcs[key[:36]]
			var want *version
			for i := range versions {
				if !accepted(src, versions[i].eventID) {
					continue
				}
				if want == nil || supersedes(*want, versions[i]) {
					want = &versions[i]
				}
			}
			if want == nil {
				continue
			}
			c.report.Checked[table]++
			if g := got[key]; g[0] != want.status || g[1] != want.eventID {
				c.report.StaleOverwrites++
				c.violate("%s %s: %s from %s, want %s from %s", table, key[37:], g[0], g[1], want.status, want.eventID)
			}
		}
	}
	return nil
}

// checkFeedback: one initial alert per feedback, however many deliveries.
func (c *chaos) checkFeedback(ctx context.Context, accepted func(*source, string) bool) error {
	alerts, err := c.countBy(ctx, `SELECT source_id::text || '/' || project_id || '/' || feedback_id, count(*) FROM feedback_alerts WHERE operation = 'initial-alert' GROUP BY 1`)
	if err != nil {
		return fmt.Errorf("feedback alerts: %w", err)
	}
	for _, t := range c.tenants {
		for key, msgs := range c.plan.feedback {
			if key[:36] != t.standard.id {
				continue
			}
			want := 0
			for _, m := range msgs {
				if accepted(t.standard, m) {
					want = 1
				}
			}
			c.report.Checked["feedback_alerts"] += want
			if got := alerts[key]; got != want {
				if got > want {
					c.report.DuplicateEffects += got - want
				}
				c.violate("feedback %s: %d initial alerts, want %d", key[37:], got, want)
			}
		}
	}
	return nil
}

func (c *chaos) checkRSS() error {
	c.fleet.mu.Lock()
	defer c.fleet.mu.Unlock()
	for name, b := range c.fleet.peak {
		mib := float64(b) / (1 << 20)
		c.report.PeakRSSMiB[name] = mib
		if mib >= 400 {
			c.violate("%s peaked at %s MiB RSS, limit 400", name, strconv.FormatFloat(mib, 'f', 0, 64))
		}
	}
	for stage, n := range c.fleet.kills {
		c.report.Kills[stage] += n
	}
	c.report.ConsumerStarts = c.fleet.starts["consume"]
	return nil
}
