package delivery

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"time"
)

// item is one pending delivery held by its endpoint's owner.
type item struct {
	message
	due     time.Time
	pos     int // in the ready heap, -1 when not there
	sending bool
	// heldAt is when the owner first held it; zero for one read from below
	// the endpoint's mark (parked already).
	heldAt time.Time
}

// keyQueue is a resource key's pending deliveries in memory, in id order
// (Kafka's order within the key). truncated: more pending ones of the key
// exist in Postgres than are held, to read when these run out; none of
// them is below floor.
type keyQueue struct {
	items     []*item
	sending   int
	truncated bool
	floor     int64
}

// cut marks kq truncated, its unread deliveries from id on.
func (kq *keyQueue) cut(id int64) {
	if !kq.truncated || id < kq.floor {
		kq.floor = id
	}
	kq.truncated = true
}

// queue is an endpoint's pending deliveries in memory, owned by its loop
// goroutine alone. ready holds what may be sent, by due time: on an
// ordered endpoint each key's head when none of the key is being sent,
// on an unordered one every delivery not being sent (each is its own
// key). The memory is bounded twice: at most perKey deliveries of a key
// (one busy key cannot crowd the others out) and at most limit in all.
type queue struct {
	ordered       bool
	perKey, limit int

	keys  map[string]*keyQueue
	byID  map[int64]*item
	ready readyHeap
}

func newQueue(ordered bool, perKey, limit int) *queue {
	return &queue{ordered: ordered, perKey: perKey, limit: limit, keys: map[string]*keyQueue{}, byID: map[int64]*item{}}
}

func (q *queue) len() int { return len(q.byID) }

func (q *queue) full() bool { return len(q.byID) >= q.limit }

func (q *queue) has(id int64) bool { return q.byID[id] != nil }

// keyOf is the key an item waits in: its resource key when the endpoint is
// ordered, its own id otherwise.
func (q *queue) keyOf(m *message) string {
	if q.ordered {
		return m.key
	}
	return m.webhookID
}

// add holds m, due at due, unless it is held already or its key is full:
// perKey deliveries held, or truncated (later ones of the key wait in
// Postgres, and m is one of them: it is read when the key's held ones are
// done). It says whether m is held.
func (q *queue) add(m message, due time.Time) bool {
	if it := q.byID[m.id]; it != nil {
		if due.Before(it.due) && !it.sending {
			// Retried by an operator while it waited: due sooner.
			it.due = due
			if it.pos >= 0 {
				heap.Fix(&q.ready, it.pos)
			}
		}
		return true
	}
	k := q.keyOf(&m)
	kq := q.keys[k]
	if kq == nil {
		kq = &keyQueue{}
		q.keys[k] = kq
	}
	at, _ := slices.BinarySearchFunc(kq.items, m.id, func(it *item, id int64) int { return cmp.Compare(it.id, id) })
	if at == len(kq.items) && (kq.truncated || len(kq.items) >= q.perKey) {
		kq.cut(m.id)
		return false
	}
	it := &item{message: m, due: due, pos: -1}
	if !m.parked {
		it.heldAt = time.Now()
	}
	kq.items = slices.Insert(kq.items, at, it)
	q.byID[m.id] = it
	if last := kq.items[len(kq.items)-1]; len(kq.items) > q.perKey && !last.sending {
		// An earlier one came in (a retry of an old delivery): the last
		// held goes back to Postgres for later.
		kq.items = kq.items[:len(kq.items)-1]
		q.unready(last)
		delete(q.byID, last.id)
		kq.cut(last.id)
	}
	q.offer(kq)
	return true
}

// reopen lets key k take deliveries after its held ones again, before
// they are read from Postgres (refill).
func (q *queue) reopen(k string) {
	if kq := q.keys[k]; kq != nil {
		kq.truncated = false
	}
}

// settle ends a refill of key k: cut says the read stopped at its limit, so
// more may wait in Postgres, after the last held.
func (q *queue) settle(k string, cut bool) {
	kq := q.keys[k]
	switch {
	case kq == nil:
	case cut && len(kq.items) > 0:
		kq.cut(kq.items[len(kq.items)-1].id + 1)
	case cut:
		kq.truncated = true
	case len(kq.items) == 0:
		delete(q.keys, k)
	}
}

// offer puts kq's head in ready when nothing of kq is being sent; a head
// that is no longer the lowest leaves ready for the new lowest.
func (q *queue) offer(kq *keyQueue) {
	if kq.sending > 0 || len(kq.items) == 0 {
		return
	}
	head := kq.items[0]
	for _, it := range kq.items[1:] {
		q.unready(it)
	}
	if head.pos < 0 {
		heap.Push(&q.ready, head)
	}
}

func (q *queue) unready(it *item) {
	if it.pos >= 0 {
		heap.Remove(&q.ready, it.pos)
	}
}

// take marks up to n deliveries due at now as being sent and returns them,
// earliest due first.
func (q *queue) take(now time.Time, n int) []*item {
	var out []*item
	for len(out) < n && len(q.ready) > 0 && !q.ready[0].due.After(now) {
		it := heap.Pop(&q.ready).(*item)
		it.sending = true
		q.keys[q.keyOf(&it.message)].sending++
		out = append(out, it)
	}
	return out
}

// nextDue is when the earliest delivery that may be sent is due.
func (q *queue) nextDue() (time.Time, bool) {
	if len(q.ready) == 0 {
		return time.Time{}, false
	}
	return q.ready[0].due, true
}

// again puts a delivery being sent back, due at due: it failed, or its
// event was not visible yet.
func (q *queue) again(it *item, due time.Time) {
	kq := q.keys[q.keyOf(&it.message)]
	it.sending, it.due = false, due
	kq.sending--
	q.offer(kq)
}

// finish drops a delivery that is done (delivered or dead), freeing its
// key's next. It returns the key and whether the key has more pending in
// Postgres than memory holds, to read now.
func (q *queue) finish(it *item) (string, bool) {
	k := q.keyOf(&it.message)
	kq := q.keys[k]
	delete(q.byID, it.id)
	if it.sending {
		kq.sending--
	}
	q.unready(it)
	kq.items = slices.DeleteFunc(kq.items, func(x *item) bool { return x == it })
	refill := kq.truncated && len(kq.items) == 0
	if len(kq.items) == 0 && !kq.truncated {
		delete(q.keys, k)
	} else {
		q.offer(kq)
	}
	return k, refill
}

// lowestOpen is the lowest id the endpoint's mark may not pass yet, for
// what the queue holds: each key's lowest held delivery, or where its
// unread rest starts, but for parked keys (whose lowest was held before
// parkedBefore), which the mark's exceptions name instead.
func (q *queue) lowestOpen(parkedBefore time.Time) int64 {
	low := int64(math.MaxInt64)
	for _, kq := range q.keys {
		switch {
		case len(kq.items) > 0 && kq.items[0].heldAt.After(parkedBefore):
			low = min(low, kq.items[0].id)
		case len(kq.items) == 0 && kq.truncated:
			low = min(low, kq.floor)
		}
	}
	return low
}

// parkedBelow is what the queue holds below id c, as the mark's
// exceptions: each held delivery, and each truncated key from where its
// unread rest starts.
func (q *queue) parkedBelow(c int64) (ids []int64, keys []string, from []int64) {
	for id := range q.byID {
		if id < c {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for k, kq := range q.keys {
		if kq.truncated && kq.floor < c {
			keys, from = append(keys, k), append(from, kq.floor)
		}
	}
	return ids, keys, from
}

// oldest is when the oldest delivery held was created (zero: none held).
func (q *queue) oldest() time.Time {
	var at time.Time
	for _, it := range q.byID {
		if at.IsZero() || it.createdAt.Before(at) {
			at = it.createdAt
		}
	}
	return at
}

// readyHeap orders deliveries by due time, then id.
type readyHeap []*item

func (h readyHeap) Len() int { return len(h) }
func (h readyHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].id < h[j].id
}
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}
func (h *readyHeap) Push(x any) {
	it := x.(*item)
	it.pos = len(*h)
	*h = append(*h, it)
}
func (h *readyHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	it.pos = -1
	*h = old[:len(old)-1]
	return it
}
