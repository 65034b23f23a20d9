package delivery

import (
	"slices"
	"testing"
	"time"
)

func msg(id int64, key string) message {
	return message{id: id, key: key, webhookID: "msg_" + key + string(rune('a'+id%26))}
}

func ids(items []*item) []int64 {
	out := make([]int64, len(items))
	for i, it := range items {
		out[i] = it.id
	}
	return out
}

// An ordered queue offers one delivery per key, its lowest, and the next
// only once that one is done; a failed head stays the head.
func TestOrderedQueueOffersEachKeysHeadOnly(t *testing.T) {
	now := time.Now()
	q := newQueue(true, 8, 100)
	for _, m := range []message{msg(1, "a"), msg(2, "b"), msg(3, "a"), msg(4, "a"), msg(5, "b")} {
		q.add(m, now)
	}
	got := q.take(now, 10)
	if want := []int64{1, 2}; !slices.Equal(ids(got), want) {
		t.Fatalf("took %v, want %v", ids(got), want)
	}
	q.again(got[0], now.Add(time.Hour)) // a's head failed
	if more := q.take(now, 10); len(more) != 0 {
		t.Fatalf("took %v while a's head waits and b's is sent", ids(more))
	}
	q.finish(got[1])
	if more := q.take(now, 10); !slices.Equal(ids(more), []int64{5}) {
		t.Fatalf("took %v after b's head was done, want [5]", ids(more))
	}
	if next, _ := q.nextDue(); !next.Equal(now.Add(time.Hour)) {
		t.Fatalf("next due %v, want a's retry", next)
	}
}

// An earlier delivery coming in late (an operator's retry) goes before the
// key's waiting head, not before one being sent.
func TestOrderedQueueTakesAnEarlierDeliveryFirst(t *testing.T) {
	now := time.Now()
	q := newQueue(true, 8, 100)
	q.add(msg(10, "a"), now)
	q.add(msg(5, "a"), now)
	got := q.take(now, 10)
	if !slices.Equal(ids(got), []int64{5}) {
		t.Fatalf("took %v, want [5]", ids(got))
	}
	q.add(msg(3, "a"), now)
	if more := q.take(now, 10); len(more) != 0 {
		t.Fatalf("took %v while 5 is sent", ids(more))
	}
	q.finish(got[0])
	if more := q.take(now, 10); !slices.Equal(ids(more), []int64{3}) {
		t.Fatalf("took %v, want [3]", ids(more))
	}
}

// A key holds at most perKey deliveries: later ones are refused until its
// held ones are done and it is read again, so one busy key cannot fill the
// memory, and none of its deliveries is skipped.
func TestQueueHoldsFewOfAKeyAndAsksForTheRest(t *testing.T) {
	now := time.Now()
	q := newQueue(true, 2, 100)
	for id := int64(1); id <= 4; id++ {
		q.add(msg(id, "a"), now)
	}
	if !q.add(msg(9, "b"), now) || q.len() != 3 {
		t.Fatalf("held %d, want a's first two and b's", q.len())
	}
	if q.add(msg(7, "a"), now) {
		t.Fatal("a took a later delivery while truncated: 3 and 4 would be skipped")
	}
	first := q.take(now, 10)
	q.finish(first[0])
	second := q.take(now, 10)
	if _, refill := q.finish(second[0]); !refill {
		t.Fatal("a's held ones are done: want a refill")
	}
	q.reopen("a")
	q.add(msg(3, "a"), now)
	q.add(msg(4, "a"), now)
	q.settle("a", true)
	if got := q.take(now, 10); !slices.Equal(ids(got), []int64{3}) {
		t.Fatalf("took %v after the refill, want [3]", ids(got))
	}
}

// An unordered queue sends every due delivery at once.
func TestUnorderedQueueOffersEverything(t *testing.T) {
	now := time.Now()
	q := newQueue(false, 8, 100)
	for id := int64(1); id <= 3; id++ {
		q.add(msg(id, "a"), now)
	}
	if got := q.take(now, 10); len(got) != 3 {
		t.Fatalf("took %v, want all three", ids(got))
	}
}
