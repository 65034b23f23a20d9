package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Scenario 2 end to end: `active` then `canceled` delivered in reverse
// order (the cancellation first) ends canceled, through ingest, the relay
// and the subscriptions group.
func TestSubscriptionCanceledThenLateActiveEndsCanceled(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	sub := "sub_" + s
	at := time.Now().Add(-time.Minute).Unix()
	event := func(id, typ, status string, created int64) []byte {
		return fmt.Appendf(nil, `{"id":%q,"object":"event","type":%q,"created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":%q,"status":%q}}}`,
			id, typ, created, sub, f.customer, status)
	}
	canceled, active := "evt_cancel_"+s, "evt_active_"+s
	for _, body := range [][]byte{
		event(canceled, "customer.subscription.deleted", "canceled", at+10),
		event(active, "customer.subscription.updated", "active", at),
	} {
		if code := f.sendSigned(t, body); code/100 != 2 {
			t.Fatalf("status %d", code)
		}
	}
	recs := recordsFor(t, suite.topics.Resource("subscriptions"), 2, canceled, active)
	waitGroupPast(t, suite.topics.Resource("subscriptions"), recs...)
	var status, version string
	if err := suite.pool.QueryRow(context.Background(), `SELECT status, version_event_id FROM subscriptions WHERE source_id = $1 AND subscription_id = $2`,
		f.sourceID, sub).Scan(&status, &version); err != nil {
		t.Fatal(err)
	}
	if status != "canceled" || version != canceled {
		t.Errorf("subscription %s from %s, want canceled from %s", status, version, canceled)
	}
}

// Scenario 1's refund end to end: charge.refunded is routed to the invoice
// it refunds (same key, same partition, after the payment), and reverses
// the grant once, even when delivered again under another event id.
func TestRefundFollowsItsInvoiceAndReversesOnce(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	invoice := "in_" + s
	paid, refund, refundAgain := "evt_paid_"+s, "evt_refund_"+s, "evt_refund2_"+s
	refunded := func(id string) []byte {
		return fmt.Appendf(nil, `{"id":%q,"object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":"ch_%s","object":"charge","invoice":%q,"customer":%q,"amount_refunded":1000,"refunded":true}}}`,
			id, time.Now().Unix(), s, invoice, f.customer)
	}
	for _, body := range [][]byte{invoicePaid(paid, invoice, f.customer, 1000), refunded(refund), refunded(refundAgain)} {
		if code := f.sendSigned(t, body); code/100 != 2 {
			t.Fatalf("status %d", code)
		}
	}
	recs := recordsFor(t, suite.topics.Resource("invoices"), 3, paid, refund, refundAgain)
	key := envelope.Key(f.tenantID, "invoice", invoice)
	for _, r := range recs {
		if string(r.Key) != key || r.Partition != recs[0].Partition {
			t.Errorf("%s: key %s partition %d, want %s on partition %d", headerMap(r)[envelope.HeaderID], r.Key, r.Partition, key, recs[0].Partition)
		}
	}
	waitConsumed(t, recs...)
	if b := f.balance(t); b != 0 {
		t.Errorf("balance = %d, want 0", b)
	}
	if n := count(t, `SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND object_id = $2 AND credits = 100`, f.tenantID, invoice); n != 1 {
		t.Errorf("reversals = %d, want 1", n)
	}
}

// waitGroupPast waits until group committed past every record.
func waitGroupPast(t *testing.T, group string, recs ...*kgo.Record) {
	t.Helper()
	adm := kadmClient(t)
	testenv.Eventually(t, time.Minute, group+" to commit past the records", func() (bool, error) {
		offsets, err := adm.FetchOffsets(context.Background(), group)
		if err != nil {
			return false, err
		}
		for _, r := range recs {
			if o, ok := offsets.Lookup(r.Topic, r.Partition); !ok || o.At <= r.Offset {
				return false, nil
			}
		}
		return true, nil
	})
}
