package consumers

import (
	"context"
	"errors"
	"testing"
)

// A deployment fault is logged when it starts, then at most once per
// interval however often the batch is retried, and again when a new one
// starts after recovery; readiness names it until the partition commits.
func TestDeploymentFaultsAreLoggedOncePerIntervalAndReadinessNamesThem(t *testing.T) {
	t.Parallel()
	d := newDeploymentFaults("g")
	d.every = 1 << 62 // no interval passes within the test
	p, q := partitionKey{"t", 0}, partitionKey{"t", 1}
	fault := errors.New("permission denied for table balances")
	if !d.failed(p, fault) {
		t.Fatal("the first fault was not logged")
	}
	for range 5 {
		if d.failed(p, fault) || d.failed(q, fault) {
			t.Fatal("a retry within the interval was logged again")
		}
	}
	if err := d.Check(context.Background()); !errors.Is(err, fault) {
		t.Fatalf("readiness = %v, want the fault", err)
	}
	d.recovered(p)
	if err := d.Check(context.Background()); !errors.Is(err, fault) {
		t.Fatalf("readiness with q still failing = %v, want the fault", err)
	}
	if !d.recovered(q) || d.recovered(q) {
		t.Fatal("recovered does not say whether the partition had a fault")
	}
	if err := d.Check(context.Background()); err != nil {
		t.Fatalf("readiness after recovery = %v", err)
	}
	if !d.failed(p, fault) {
		t.Fatal("a new fault after recovery was not logged")
	}
}
