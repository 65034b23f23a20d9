package destinations_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/consumers/destinations"
)

// gateProbe drives a Gate one look at a time: each look's answer is sent by
// the test, and every step the gate takes is written down in order.
type gateProbe struct {
	answers          chan bool
	started, stopped chan struct{}

	mu    sync.Mutex
	steps []string
}

func newGateProbe() *gateProbe {
	return &gateProbe{answers: make(chan bool), started: make(chan struct{}), stopped: make(chan struct{})}
}

func (p *gateProbe) step(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, s)
}

func (p *gateProbe) taken() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.steps)
}

func (p *gateProbe) gate(idle time.Duration) destinations.Gate {
	return destinations.Gate{
		Subscribed: func(ctx context.Context) (bool, error) {
			p.step("ask")
			select {
			case yes := <-p.answers:
				return yes, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		},
		Mark: func(context.Context) (func(context.Context) error, error) {
			p.step("mark")
			return func(context.Context) error { p.step("forward"); return nil }, nil
		},
		Every: time.Millisecond,
		Idle:  idle,
		Held: func(held bool) {
			if held {
				p.step("held")
			} else {
				p.step("started")
			}
		},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// run runs the gate over p.group; the channel gets what Run returned.
func (p *gateProbe) run(ctx context.Context, idle time.Duration) <-chan error {
	ran := make(chan error, 1)
	go func() { ran <- p.gate(idle).Run(ctx, p.group) }()
	return ran
}

// group is a consumer group that runs until its context ends.
func (p *gateProbe) group(ctx context.Context) error {
	p.started <- struct{}{}
	<-ctx.Done()
	p.stopped <- struct{}{}
	return nil
}

// While no endpoint is enabled the group does not run, and each look marks
// the topics' ends before it asks: a record before the mark was accepted
// before the answer that saw no endpoint. An endpoint starts the group; a
// look that sees none stops it (Idle 0) and holding starts again.
func TestTheFanOutRunsOnlyWhileAnEndpointIsEnabled(t *testing.T) {
	t.Parallel()
	p := newGateProbe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := p.run(ctx, 0)

	p.answers <- false // the first look: no endpoint
	p.answers <- false // the second
	p.answers <- true  // the third: one was created
	<-p.started
	p.answers <- true  // running, still one
	p.answers <- false // running, none: the group stops
	<-p.stopped
	p.answers <- true // held again, one: it starts again
	<-p.started
	cancel()
	<-p.stopped
	if err := <-ran; !errors.Is(err, context.Canceled) && err != nil {
		t.Fatalf("Run: %v", err)
	}

	want := []string{
		"mark", "ask", "forward", "held",
		"mark", "ask", "forward",
		"mark", "ask", "started",
		"ask", "ask",
		"mark", "ask", "started",
	}
	if got := p.taken(); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("the gate's steps:\n got %v\nwant %v (then at most the last look's ask)", got, want)
	}
}

// A look that sees no endpoint stops a running group only once every look
// for Idle said so: replacing a tenant's only endpoint does not stop it.
func TestTheFanOutKeepsRunningThroughAShortGap(t *testing.T) {
	t.Parallel()
	p := newGateProbe()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ran := p.run(ctx, time.Hour)

	p.answers <- true
	<-p.started
	for range 5 {
		p.answers <- false
	}
	p.answers <- true
	cancel()
	<-p.stopped
	<-ran
	for _, s := range p.taken()[3:] {
		if s != "ask" {
			t.Fatalf("the group stopped within Idle: steps %v", p.taken())
		}
	}
}

// A group that fails ends the gate with its error, as it ended the stage
// before there was a gate.
func TestAFailingGroupEndsTheGate(t *testing.T) {
	t.Parallel()
	gate := newGateProbe().gate(0)
	gate.Subscribed = func(context.Context) (bool, error) { return true, nil }
	failed := errors.New("deployment fault")
	if err := gate.Run(t.Context(), func(context.Context) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("Run: %v, want the group's error", err)
	}
}
