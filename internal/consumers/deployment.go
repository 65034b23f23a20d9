package consumers

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// deploymentFaults are a group's partitions held up by the deployment
// (pg.FaultDeployment: a revoked privilege, a table missing after a bad
// deploy). Such a batch is retried forever, never dead-lettered, which from
// outside looks like a stall: so while one lasts the group's readiness
// names it, and it is logged at ERROR once a minute (not once per retry),
// until the partition commits again or leaves this process.
type deploymentFaults struct {
	group string
	every time.Duration // between two ERROR lines of the group

	mu     sync.Mutex
	by     map[partitionKey]deploymentFault
	logged time.Time
}

type deploymentFault struct {
	err   error
	since time.Time
}

func newDeploymentFaults(group string) *deploymentFaults {
	return &deploymentFaults{group: group, every: time.Minute, by: map[partitionKey]deploymentFault{}}
}

// failed records p's batch failing for the deployment; log says whether
// to log it at ERROR now (the first of the group's faults, then once per
// d.every).
func (d *deploymentFaults) failed(p partitionKey, err error) (log bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, held := d.by[p]
	if !held {
		f.since = time.Now()
	}
	f.err = err
	d.by[p] = f
	if now := time.Now(); len(d.by) == 1 && !held || now.Sub(d.logged) >= d.every {
		d.logged = now
		return true
	}
	return false
}

// recovered forgets p's fault; was says it had one.
func (d *deploymentFaults) recovered(p partitionKey) (was bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, was = d.by[p]
	delete(d.by, p)
	if len(d.by) == 0 {
		d.logged = time.Time{}
	}
	return was
}

// Check fails while any partition of the group is held up by the
// deployment, naming the oldest fault in the database's words (a missing
// grant is the line a person needs).
func (d *deploymentFaults) Check(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var oldest *deploymentFault
	var at partitionKey
	for p, f := range d.by {
		if oldest == nil || f.since.Before(oldest.since) {
			oldest, at = &f, p
		}
	}
	if oldest == nil {
		return nil
	}
	return fmt.Errorf("consumer group %s cannot apply %s[%d] (and %d more partitions) since %s, retrying: the deployment is at fault (schema or privileges): %w",
		d.group, at.topic, at.partition, len(d.by)-1, oldest.since.UTC().Format(time.RFC3339), oldest.err)
}

// CheckDeployment is the group's readiness: it fails while the deployment
// holds any of its partitions up (deploymentFaults).
func (g *Group) CheckDeployment(ctx context.Context) error { return g.faults.Check(ctx) }
