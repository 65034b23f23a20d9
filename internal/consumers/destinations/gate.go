package destinations

import (
	"context"
	"log/slog"
	"time"
)

// Idle is how long no endpoint is enabled before the fan-out's group stops
// by default: an operator replacing a tenant's only endpoint does not make
// it leave and join again.
const Idle = time.Minute

// Gate runs the fan-out's group only while some endpoint is enabled. A group
// reading every event topic with nothing to write costs the brokers a fetch
// per partition of each, and most deployments ingest long before any tenant
// has an endpoint.
//
// While the group is stopped, each look first marks where its topics end,
// then asks whether an endpoint is enabled, and on a no moves the group's
// commits to the mark. That order makes the skip exact without clocks: a
// record before the mark was produced, so accepted, before the answer that
// saw no endpoint, so it is no endpoint's; an endpoint created after that
// answer takes the events accepted after it, all past the mark, where the
// group starts.
type Gate struct {
	// Subscribed reports whether some endpoint is enabled, read afresh.
	Subscribed func(context.Context) (bool, error)
	// Mark reads where the group's topics end now and returns what moves the
	// group's commits there: never back, and not at all while the group has
	// members (another process's, which read the records themselves).
	Mark func(context.Context) (forward func(context.Context) error, err error)
	// Every is how often to look; Idle how long every look must have said no
	// before a running group stops (0: at the first).
	Every, Idle time.Duration
	// Held is told when the group is held stopped (true) and started.
	Held func(bool)
	Log  *slog.Logger
}

// Run runs run (the group) while an endpoint is enabled, until ctx ends. An
// error of run ends Run with it.
func (g Gate) Run(ctx context.Context, run func(context.Context) error) error {
	for {
		if err := g.hold(ctx); err != nil {
			return err
		}
		if err := g.running(ctx, run); err != nil || ctx.Err() != nil {
			return err
		}
	}
}

// hold returns once an endpoint is enabled (or ctx ended), keeping the
// group's commits at the topics' ends meanwhile.
func (g Gate) hold(ctx context.Context) error {
	held := false
	for {
		forward, err := g.Mark(ctx)
		if err != nil && ctx.Err() == nil {
			g.Log.Warn("fan-out: end offsets not read", slog.Any("error", err))
		}
		subscribed, serr := g.Subscribed(ctx)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case serr != nil:
			g.Log.Warn("fan-out: endpoints not read", slog.Any("error", serr))
		case subscribed:
			g.Log.Info("fan-out starting: an endpoint is enabled")
			g.held(false)
			return nil
		default:
			if forward != nil {
				if err := forward(ctx); err != nil && ctx.Err() == nil {
					g.Log.Warn("fan-out: offsets not moved", slog.Any("error", err))
				}
			}
			if !held {
				held = true
				g.Log.Info("fan-out held stopped: no endpoint is enabled")
				g.held(true)
			}
		}
		if err := g.wait(ctx); err != nil {
			return err
		}
	}
}

// running runs the group until every look for Idle said no endpoint is
// enabled, then stops it (it commits what it applied and leaves).
func (g Gate) running(ctx context.Context, run func(context.Context) error) error {
	groupCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- run(groupCtx) }()
	var since time.Time // the first of the looks that said no in a row
	tick := time.NewTicker(g.Every)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
		subscribed, err := g.Subscribed(groupCtx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				g.Log.Warn("fan-out: endpoints not read", slog.Any("error", err))
			}
			continue
		case subscribed:
			since = time.Time{}
			continue
		case since.IsZero():
			since = time.Now()
		}
		if time.Since(since) >= g.Idle {
			g.Log.Info("fan-out stopping: no endpoint is enabled", slog.Duration("for", time.Since(since)))
			stop()
			return <-done
		}
	}
}

func (g Gate) held(held bool) {
	if g.Held != nil {
		g.Held(held)
	}
}

func (g Gate) wait(ctx context.Context) error {
	t := time.NewTimer(g.Every)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
