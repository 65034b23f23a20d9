package main

import (
	"context"
	"fmt"
	"time"
)

// faultLock holds a workspace's balance row locked, as an operator's
// UPDATE or a long report would, and kills a consumer instance meanwhile:
// the workspace's records are set aside (consumer_waiting) by whichever
// member owns their partitions, outlive the kill, and are applied once
// the lock ends, each once (the final check's grants and balances).
const faultLock = "balance_lock_and_consumer_kill"

func (c *chaos) lockBalance(ctx context.Context, w *window, afterKill func()) error {
	// Not the probe's tenant (tenants[0]): its invoice must not wait.
	t := c.tenants[len(c.tenants)-1]
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("lock a balance: %w", err)
	}
	defer conn.Release()
	var workspace string
	if err := conn.QueryRow(ctx, `SELECT workspace_id::text FROM workspace_customers WHERE tenant_id = $1 AND customer_id = $2`,
		t.id, t.customers[0]).Scan(&workspace); err != nil {
		return fmt.Errorf("lock a balance: %w", err)
	}
	// A workspace granted nothing yet has no row to lock: one of zero
	// credits is its balance all the same.
	if _, err := conn.Exec(ctx, `INSERT INTO balances (workspace_id, tenant_id, credits) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`,
		workspace, t.id); err != nil {
		return fmt.Errorf("lock a balance: %w", err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("lock a balance: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // the lock ends with it
	if _, err := tx.Exec(ctx, `SELECT credits FROM balances WHERE workspace_id = $1 FOR UPDATE`, workspace); err != nil {
		return fmt.Errorf("lock a balance: %w", err)
	}
	// An invoice of the locked workspace, expected granted once like the
	// load's: its record must be set aside, not hold its partition.
	c.mu.Lock()
	c.report.Locks++
	id := fmt.Sprintf("in_locked_%d", c.report.Locks)
	ev := "evt_" + id
	inv := &invoice{src: t.stripe, id: id, customer: t.customers[0], amount: 2000, mapped: true, paidIDs: []string{ev}}
	c.plan.invoices[t.stripe.id+"/"+id] = inv
	c.mu.Unlock()
	go c.sender.deliver(ctx, stripeDelivery(t.stripe, ev, invoicePaidBody(ev, id, inv.customer, inv.amount)))
	if err := poll(ctx, 30*time.Second, "the locked workspace's invoice to be set aside", func() (bool, error) {
		var n int
		err := c.pool.QueryRow(ctx, `SELECT count(*) FROM consumer_waiting WHERE headers->>'ce_id' = $1`, ev).Scan(&n)
		return n > 0, err
	}); err != nil {
		c.violate("%s: %v", faultLock, err)
	}
	name := c.pick(c.consumers)
	w.target = name
	c.fleet.kill(name)
	afterKill()
	if err := c.fleet.restart(ctx, name, "/readyz"); err != nil {
		return err
	}
	c.wait(ctx, 2000, 2000)
	return tx.Rollback(ctx)
}
