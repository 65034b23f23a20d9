package main

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"time"
)

// Fault kinds, as the report names them.
const (
	faultIngest   = "ingest_kill"
	faultLeader   = "relay_leader_kill"
	faultStandby  = "relay_standby_kill"
	faultConsumer = "consumer_kill"
	faultKafka    = "kafka_outage"
	faultPause    = "sigstop_pause"
	faultBroker   = "broker_kill"
	faultPostgres = "postgres_kill"
	faultLatency  = "consumer_pg_latency"
	faultCut      = "consumer_pg_cut"
	faultRabbitMQ = "rabbitmq_kill"
)

// faultList is the sequence of faults of a run, shuffled by the seed: each
// kind at least `each` times.
func (c *chaos) faultList(each int) []string {
	var list []string
	for range each {
		list = append(list, faultIngest, faultLeader, faultStandby, faultConsumer, faultKafka, faultPause, faultLock)
		if c.targets != nil {
			list = append(list, faultRabbitMQ)
		}
	}
	// A kafka_outage takes the whole cluster down; on three brokers it
	// happens once, beside one broker at a time three times, and Postgres
	// dies twice.
	if !c.quick {
		list = slices.DeleteFunc(list, func(k string) bool { return k == faultKafka })
		list = append(list, faultKafka, faultBroker, faultBroker, faultBroker, faultPostgres, faultPostgres, faultSlot, faultLatency, faultCut)
	}
	c.rng.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	return list
}

// runFaults injects each fault at a random moment, restarts what it killed
// through the normal start path, and measures the time from the fault to the
// effect of an invoice sent right after it.
func (c *chaos) runFaults(ctx context.Context, list []string) {
	for i, kind := range list {
		gap := time.Duration(1000+c.rng.IntN(3000)) * time.Millisecond
		select {
		case <-time.After(gap):
		case <-ctx.Done():
			return
		}
		members, _, err := c.membership(ctx)
		if err != nil {
			c.violate("before %s: %v", kind, err)
		}
		at := time.Now()
		w := &window{cause: kind, from: at}
		c.mu.Lock()
		c.windows = append(c.windows, w)
		c.mu.Unlock()
		c.log.Info("fault", slog.String("kind", kind), slog.Int("n", i+1), slog.Int("of", len(list)))
		var probe *probe
		// The probe leaves right after the kill (or stop), so its effect
		// waits for whatever takes over.
		err = c.inject(ctx, kind, w, func() { probe = c.sendProbe(ctx, i) })
		w.allowed = c.allowance(w)
		if err != nil {
			c.violate("fault %s: %v", kind, err)
			continue
		}
		seen, err := probe.effect(ctx)
		if err != nil {
			c.violate("after %s: the probe invoice %s had no effect: %v", kind, probe.id, err)
			continue
		}
		// The next fault starts once this one's rebalances are over, so
		// each is counted where it belongs.
		if err := c.settle(ctx, members, kind == faultConsumer || kind == faultLock); err != nil {
			c.violate("after %s: %v", describe(w), err)
		}
		took := seen.Sub(at)
		c.mu.Lock()
		c.report.WorstEffectMS[kind] = max(c.report.WorstEffectMS[kind], took.Milliseconds())
		c.mu.Unlock()
		if kind == faultKafka {
			// Most of an outage's figure is the broker's own restart (log
			// recovery after SIGKILL); this part is Sluice's.
			back := seen.Sub(c.kafkaBack)
			c.mu.Lock()
			c.report.WorstEffectMS["kafka_outage_from_broker_back"] = max(c.report.WorstEffectMS["kafka_outage_from_broker_back"], back.Milliseconds())
			c.mu.Unlock()
		}
		c.log.Info("effect after fault", slog.String("kind", kind), slog.Duration("took", took))
	}
}

// inject causes one fault and names in w the instance it killed or paused.
func (c *chaos) inject(ctx context.Context, kind string, w *window, afterKill func()) error {
	switch kind {
	case faultIngest:
		name := c.pick(c.ingests)
		c.fleet.kill(name)
		afterKill()
		return c.fleet.restart(ctx, name, "/readyz")
	case faultConsumer:
		name := c.pick(c.consumers)
		w.target = name
		c.fleet.kill(name)
		afterKill()
		return c.fleet.restart(ctx, name, "/readyz")
	case faultLeader, faultStandby:
		leader, err := c.leader(ctx)
		if err != nil {
			return err
		}
		name := leader
		if kind == faultStandby {
			name = c.standbyOf(leader)
		}
		c.fleet.kill(name)
		afterKill()
		// Back as the standby; the other relay leads (or, for a standby
		// kill, never stopped leading).
		if err := c.fleet.restart(ctx, name, "/healthz"); err != nil {
			return err
		}
		_, err = c.leader(ctx)
		return err
	case faultKafka:
		c.mu.Lock()
		c.report.Kills["kafka"]++
		c.mu.Unlock()
		if err := c.stack(ctx, "kafka-kill"); err != nil {
			return err
		}
		afterKill()
		c.wait(ctx, 4000, 4000)
		err := c.stack(ctx, "kafka-start")
		c.kafkaBack = time.Now()
		return err
	case faultBroker:
		node := fmt.Sprint(c.rng.IntN(len(c.brokers)))
		c.mu.Lock()
		c.report.Kills["kafka_broker"]++
		c.mu.Unlock()
		if err := c.stack(ctx, "kafka-kill", node); err != nil {
			return err
		}
		afterKill()
		c.wait(ctx, 3000, 4000)
		return c.stack(ctx, "kafka-start", node)
	case faultPostgres:
		c.mu.Lock()
		c.report.Kills["postgres"]++
		c.mu.Unlock()
		if err := c.stack(ctx, "pg-kill"); err != nil {
			return err
		}
		afterKill()
		c.wait(ctx, 2000, 4000)
		return c.stack(ctx, "pg-start")
	case faultRabbitMQ:
		// A tenant's queue server crashes: its endpoint's deliveries wait
		// and retry, the others' go on.
		c.mu.Lock()
		c.report.Kills["rabbitmq"]++
		c.mu.Unlock()
		if err := c.stack(ctx, "rabbitmq-kill"); err != nil {
			return err
		}
		afterKill()
		c.wait(ctx, 3000, 3000)
		return c.stack(ctx, "rabbitmq-start")
	case faultLatency:
		c.proxy.delay.Store(int64(200 * time.Millisecond))
		afterKill()
		c.wait(ctx, 3000, 3000)
		c.proxy.delay.Store(0)
		return nil
	case faultCut:
		c.proxy.cut()
		afterKill()
		c.wait(ctx, 3000, 2000)
		c.proxy.restore()
		return nil
	case faultSlot:
		return c.invalidateSlot(ctx, afterKill)
	case faultLock:
		return c.lockBalance(ctx, w, afterKill)
	case faultPause:
		all := append(append(append([]string{}, c.ingests...), c.relays...), c.consumers...)
		name, d := c.pick(all), time.Duration(2000+c.rng.IntN(2500))*time.Millisecond
		w.target = name
		c.fleet.pause(ctx, name, d, afterKill)
		return nil
	}
	return fmt.Errorf("unknown fault %q", kind)
}

// wait lets a fault last from ms to ms+spread milliseconds.
func (c *chaos) wait(ctx context.Context, ms, spread int) {
	select {
	case <-time.After(time.Duration(ms+c.rng.IntN(spread)) * time.Millisecond):
	case <-ctx.Done():
	}
}

func (c *chaos) pick(names []string) string { return names[c.rng.IntN(len(names))] }

// leader waits for the relay that leads (the one /readyz calls ready).
func (c *chaos) leader(ctx context.Context) (string, error) {
	var name string
	err := poll(ctx, 90*time.Second, "a relay to lead", func() (bool, error) {
		for _, r := range c.relays {
			if c.fleet.alive(r) && c.fleet.ready(r) {
				name = r
				return true, nil
			}
		}
		return false, nil
	})
	return name, err
}

func (c *chaos) standbyOf(leader string) string {
	for _, r := range c.relays {
		if r != leader {
			return r
		}
	}
	return leader
}

// stack runs dev/chaos/stack.sh (the chaos services' start path).
func (c *chaos) stack(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.stackScript}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("stack.sh %v: %w: %s", args, err, out)
	}
	return nil
}

// probe is an eligible invoice sent right after a fault.
type probe struct {
	id   string
	seen chan time.Time // when its grant was first visible
	err  chan error
}

// sendProbe sends a fresh eligible invoice.paid in the background (ingest
// may be down: the sender retries), adds it to the plan's invoices, and
// watches for its grant meanwhile, so the time to effect does not wait for
// the fault's own recovery (a broker's restart) to be over.
func (c *chaos) sendProbe(ctx context.Context, n int) *probe {
	t := c.tenants[0]
	id := fmt.Sprintf("in_probe_%d", n)
	ev := "evt_" + id
	inv := &invoice{src: t.stripe, id: id, customer: t.customers[0], amount: 2000, mapped: true, paidIDs: []string{ev}}
	c.mu.Lock()
	c.plan.invoices[t.stripe.id+"/"+id] = inv
	c.mu.Unlock()
	p := &probe{id: id, seen: make(chan time.Time, 1), err: make(chan error, 1)}
	go c.sender.deliver(ctx, stripeDelivery(t.stripe, ev, invoicePaidBody(ev, id, inv.customer, inv.amount)))
	go func() {
		err := poll(ctx, 3*time.Minute, "the grant of "+id, func() (bool, error) {
			var n int
			err := c.pool.QueryRow(ctx, `SELECT count(*) FROM credit_grants WHERE source_id = $1 AND object_id = $2`, t.stripe.id, id).Scan(&n)
			return n > 0, err
		})
		if err != nil {
			p.err <- err
			return
		}
		p.seen <- time.Now()
	}()
	return p
}

// effect waits for the probe's grant and says when it was first seen.
func (p *probe) effect(ctx context.Context) (time.Time, error) {
	select {
	case at := <-p.seen:
		return at, nil
	case err := <-p.err:
		return time.Time{}, err
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
}
