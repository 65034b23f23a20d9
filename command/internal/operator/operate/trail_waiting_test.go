package operate_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store/inbox"
)

// An event whose record a consumer group set aside (its effect needs a row
// locked elsewhere) says so in its trail: the group, the reason, since
// when and where in Kafka; another event's record set aside is not its.
func TestTrailShowsTheEventsRecordsSetAside(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now().UTC()
	ids := b.seed(t, row{b.tenantA, b.sourceA, "evt_w", "stripe.invoice.paid", "in_w", inbox.StatusPublished, now.Add(-time.Minute)},
		row{b.tenantA, b.sourceA, "evt_w_other", "stripe.invoice.paid", "in_wo", inbox.StatusPublished, now.Add(-time.Minute)})
	for i, id := range ids {
		// The headers as the runtime keeps them: the record's own.
		if _, err := b.pool.Exec(ctx, `INSERT INTO consumer_waiting (consumer_group, topic, partition, "offset", key, headers, payload, record_time, reason)
VALUES ('sluice.credits', 'sluice.invoices', 3, $1, 'k', jsonb_build_object('sluice_inboxid', $2::text, 'ce_tenantid', $3::text), '{}', now(),
        'balance of workspace w locked by another transaction')`, 40+i, strconv.FormatInt(id, 10), b.tenantA); err != nil {
			t.Fatal(err)
		}
	}
	trail, err := b.op.Trail(ctx, nil, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(trail.Waiting) != 1 {
		t.Fatalf("waiting = %+v, want the event's one record", trail.Waiting)
	}
	w := trail.Waiting[0]
	if w.Group != "sluice.credits" || w.Topic != "sluice.invoices" || w.Partition != 3 || w.Offset != 40 ||
		w.Reason != "balance of workspace w locked by another transaction" || time.Since(w.Since) > time.Minute {
		t.Errorf("waiting = %+v", w)
	}
}
