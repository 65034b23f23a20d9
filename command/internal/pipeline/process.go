package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"net"

	"golang.org/x/sync/errgroup"
)

// Process is a running Sluice process.
type Process struct {
	addr      net.Addr
	adminAddr net.Addr
	portal    net.Addr
	done      chan struct{}
	err       error
}

// Addr is where the public listener is.
func (p *Process) Addr() net.Addr { return p.addr }

// AdminAddr is where the admin listener is; nil without one.
func (p *Process) AdminAddr() net.Addr { return p.adminAddr }

// PortalAddr is where the portal listener is; nil without one.
func (p *Process) PortalAddr() net.Addr { return p.portal }

// Wait blocks until the process stopped (its context ended and everything
// drained) and returns the first error of a stage that failed for good.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// stage is one unit of the process: it runs until ctx ends, and an error it
// returns stops every other stage. A stage with a gate starts only once the
// gate opened (its dependency is there).
type stage struct {
	name string
	gate *topicGate
	run  func(ctx context.Context) error
}

// Start validates cfg, connects to Postgres and starts the configured
// stages. They run until ctx ends.
func Start(ctx context.Context, cfg Config, log *slog.Logger) (*Process, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &assembly{cfg: cfg.WithDefaults(), log: log}
	if err := a.build(ctx); err != nil {
		a.close()
		return nil, err
	}
	return a.start(ctx), nil
}

// start runs the stages in one errgroup: the first to fail for good cancels
// the others' context; Wait returns once all of them drained and the shared
// resources are closed.
func (a *assembly) start(ctx context.Context) *Process {
	p := &Process{addr: a.ln.Addr(), done: make(chan struct{})}
	if a.adminLn != nil {
		p.adminAddr = a.adminLn.Addr()
	}
	p.portal = a.portalAddr()
	g, ctx := errgroup.WithContext(ctx)
	for _, s := range a.stages {
		g.Go(func() error {
			if s.gate != nil {
				if err := s.gate.wait(ctx); err != nil {
					return nil // stopped while waiting
				}
				a.log.Info("stage starting", slog.String("stage", s.name))
			}
			return stopped(s.run(ctx))
		})
	}
	go func() {
		p.err = g.Wait()
		a.close()
		close(p.done)
	}()
	return p
}

// stopped treats a stage ending because its context ended as a clean stop.
func stopped(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
