package cdc

import (
	"testing"
	"time"
)

func TestWatermarkNeverPassesAnUnacknowledgedRecord(t *testing.T) {
	t.Parallel()
	w := newWatermark(100)

	t1 := w.begin(time.Time{})
	w.add(t1, 1)
	w.add(t1, 1)
	w.commit(t1, 200)
	t2 := w.begin(time.Time{})
	w.add(t2, 1)
	w.commit(t2, 300)

	w.ack(t2, 1) // the later transaction is acknowledged first
	if got, _ := w.position(); got != 100 {
		t.Fatalf("confirmed %v before the first transaction was acknowledged", got)
	}
	w.ack(t1, 1)
	if got, inflight := w.position(); got != 100 || inflight != 1 {
		t.Fatalf("confirmed %v with one record of t1 unacknowledged (inflight %d)", got, inflight)
	}
	w.ack(t1, 1)
	if got, inflight := w.position(); got != 300 || inflight != 0 {
		t.Fatalf("confirmed %v inflight %d, want 300 and 0", got, inflight)
	}
}

func TestWatermarkWaitsForCommitOfOpenTransaction(t *testing.T) {
	t.Parallel()
	w := newWatermark(10)
	t1 := w.begin(time.Time{})
	w.add(t1, 1)
	w.ack(t1, 1)
	if got, _ := w.position(); got != 10 {
		t.Fatalf("confirmed %v inside an open transaction", got)
	}
	w.commit(t1, 50)
	w.mark(60, time.Time{}) // a heartbeat after it
	if got, _ := w.position(); got != 60 {
		t.Fatalf("confirmed %v, want 60", got)
	}
}

func TestWatermarkHeartbeatBehindPendingWork(t *testing.T) {
	t.Parallel()
	w := newWatermark(10)
	t1 := w.begin(time.Time{})
	w.add(t1, 1)
	w.commit(t1, 20)
	w.mark(30, time.Time{})
	if got, _ := w.position(); got != 10 {
		t.Fatalf("a heartbeat let the watermark pass pending records: %v", got)
	}
	w.ack(t1, 1)
	if got, _ := w.position(); got != 30 {
		t.Fatalf("confirmed %v, want 30", got)
	}
}
