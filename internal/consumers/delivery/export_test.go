package delivery

import (
	"context"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Statements are the deliverer's SQL by file name, for the test of the
// plans its connections keep.
var Statements = map[string]string{
	"pending": pendingSQL, "key_next": keyNextSQL, "held": heldSQL, "redo": redoSQL, "mark_read": markReadSQL, "mark": markSQL,
	"minutes_prune": minutesPruneSQL, "queue_rows": queueRowsSQL, "queue_backfill": queueBackfillSQL, "delivered": deliveredSQL,
	"failed": failedSQL, "bodies": bodiesSQL, "failing": failingSQL, "recovered": recoveredSQL, "disable": disableSQL,
}

// Sender is a target's sender kept across attempts, as a loop keeps it.
type Sender struct {
	d *Deliverer
	s sender
	t endpoints.Target
}

// NewSender opens t's sender.
func (d *Deliverer) NewSender(t endpoints.Target) *Sender {
	return &Sender{d: d, s: d.newSender(t, 1), t: t}
}

// Send sends a synthetic event about resource key with id.
func (s *Sender) Send(ctx context.Context, key, id string) endpoints.Attempt {
	m := message{webhookID: "msg_" + id, attempt: 1, key: key, body: []byte(`{"id":"` + id + `"}`), eventID: id,
		eventType: "sluice.test", src: "/tests", contentType: "application/json"}
	a, _ := s.d.send(ctx, s.s, &s.t, m)
	return a
}

// Close closes the sender.
func (s *Sender) Close() { s.s.close() }
