package cdc

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/prometheus/client_golang/prometheus"
)

func keepalive(walEnd pglogrepl.LSN) []byte {
	msg := []byte{pglogrepl.PrimaryKeepaliveMessageByteID}
	msg = binary.BigEndian.AppendUint64(msg, uint64(walEnd))
	msg = binary.BigEndian.AppendUint64(msg, 0) // server time
	return append(msg, 0)                       // no reply requested
}

// Keepalives arrive in the middle of a transaction's output; their WAL end is
// confirmable only between transactions with nothing unacknowledged.
func TestKeepaliveConfirmsServerWALEndOnlyWhenIdle(t *testing.T) {
	t.Parallel()
	r := &Relay{cfg: Config{}.WithDefaults(), metrics: newMetrics(prometheus.NewRegistry(), "test")}
	s := &session{relay: r, wm: newWatermark(100), lastCommit: 100}
	confirmed := func() pglogrepl.LSN { p, _ := s.wm.position(); return p }

	s.tx = s.wm.begin(time.Now())
	s.wm.add(s.tx, 1)
	if err := s.handleCopyData(t.Context(), keepalive(500)); err != nil {
		t.Fatal(err)
	}
	if got := confirmed(); got != 100 {
		t.Fatalf("a keepalive inside a transaction confirmed %v", got)
	}
	tx := s.tx
	s.wm.commit(tx, 300)
	s.tx, s.lastCommit = nil, 300
	_ = s.handleCopyData(t.Context(), keepalive(600))
	if got := confirmed(); got != 100 {
		t.Fatalf("a keepalive with a record unacknowledged confirmed %v", got)
	}
	s.wm.ack(tx, 1)
	if got := confirmed(); got != 300 {
		t.Fatalf("confirmed %v after the transaction's ack, want 300", got)
	}
	_ = s.handleCopyData(t.Context(), keepalive(250)) // behind the last commit
	if got := confirmed(); got != 300 {
		t.Fatalf("a keepalive behind the last commit moved the position to %v", got)
	}
	_ = s.handleCopyData(t.Context(), keepalive(700))
	if got := confirmed(); got != 700 {
		t.Fatalf("an idle keepalive at 700 left the position at %v", got)
	}
}
