package testenv

import (
	"context"
	"errors"
	"testing"
)

// Run runs a stage's Run in the background for the rest of the test. At
// cleanup its context ends and the test waits for Run to return, failing
// if it returned an error other than the context's. Cleanups run last
// first, so what a test registers after Run (an HTTP server in front of an
// ingest service) is stopped before it, as a process stops on SIGTERM.
func Run(tb testing.TB, run func(ctx context.Context) error) {
	tb.Helper()
	// Not tb.Context(): that ends before any cleanup runs, and the stage
	// must outlive what is stopped ahead of it.
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-ran; err != nil && !errors.Is(err, context.Canceled) {
			tb.Errorf("stage stopped with: %v", err)
		}
	})
}
