package ingest

import "sync"

// fairQueue holds deliveries waiting for a committer, one bounded FIFO per
// tenant, and hands them out round-robin across tenants. A tenant flooding
// the commit path fills only its own queue (its excess answered 503) and
// takes only its share of each batch, so another tenant's delivery waits
// for about one transaction, not behind the flood.
type fairQueue struct {
	perTenant int // bound of one tenant's queue
	total     int // bound of all queues together

	mu     sync.Mutex
	cond   *sync.Cond
	queues map[string]*tenantQueue
	active []*tenantQueue // tenants with queued deliveries, in serving order
	n      int
	closed bool
}

type tenantQueue struct {
	tenant string
	items  []*request
}

func newFairQueue(perTenant, total int) *fairQueue {
	q := &fairQueue{perTenant: perTenant, total: total, queues: map[string]*tenantQueue{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues requests of one tenant, all or none: false when the tenant's
// queue or the whole queue has no room, or the queue is closed.
func (q *fairQueue) push(tenant string, rs ...*request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	tq := q.queues[tenant]
	queued := 0
	if tq != nil {
		queued = len(tq.items)
	}
	if q.closed || queued+len(rs) > q.perTenant || q.n+len(rs) > q.total {
		return false
	}
	if tq == nil {
		tq = &tenantQueue{tenant: tenant}
		q.queues[tenant] = tq
		q.active = append(q.active, tq)
	}
	tq.items = append(tq.items, rs...)
	q.n += len(rs)
	if len(rs) == 1 {
		q.cond.Signal()
	} else {
		q.cond.Broadcast()
	}
	return true
}

// take blocks until something is queued, then fills batch with up to max
// requests taken one per tenant in turn. It returns false once the queue is
// closed and empty.
func (q *fairQueue) take(batch []*request, max int) ([]*request, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.n == 0 {
		return batch, false
	}
	for len(batch) < max && q.n > 0 {
		for i := 0; i < len(q.active) && len(batch) < max; {
			tq := q.active[i]
			batch = append(batch, tq.items[0])
			tq.items[0] = nil
			tq.items = tq.items[1:]
			q.n--
			if len(tq.items) == 0 {
				delete(q.queues, tq.tenant)
				q.active = append(q.active[:i], q.active[i+1:]...)
				continue
			}
			i++
		}
	}
	// The next batch starts with the next tenant, so no tenant is always
	// first in line when batches are small.
	if len(q.active) > 1 {
		q.active = append(q.active[1:], q.active[0])
	}
	return batch, true
}

// close wakes every committer; they drain what is queued, then stop.
func (q *fairQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.cond.Broadcast()
}
