package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/adminclient"
	"github.com/sluicehq/sluice/command/internal/effects/credits"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// deref is what p points at, or the zero value.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// "Why didn't I get my credits?" answered over the admin API: an invoice
// sent through the whole pipeline is found by its event id, and
// its trail names the delivery, the grant it caused (business key,
// workspace, credits) and the Kafka topic, partition and offset at which
// the credits group applied it; a plain Kafka consumer finds that very
// record there.
func TestTrailNamesTheRecordAndTheGrantOfAnEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	eventID, invoiceID := "evt_trail_"+s, "in_trail_"+s
	if code := f.sendSigned(t, invoicePaid(eventID, invoiceID, f.customer, 1000)); code/100 != 2 {
		t.Fatalf("status %d", code)
	}
	testenv.Eventually(t, time.Minute, "the grant", func() (bool, error) { return f.grants(t) == 1, nil })

	// Through the Go client (adminclient), as an operator's backend with a
	// read token of the tenant asks it.
	c, err := adminclient.New(suite.adminURL, adminToken(t, admintoken.RoleRead, f.tenantID))
	if err != nil {
		t.Fatal(err)
	}
	found, err := c.SearchEventsWithResponse(ctx, &adminclient.SearchEventsParams{EventId: &eventID})
	if err != nil || len(found.JSON200.Items) != 1 {
		t.Fatalf("search by event id: %v, want one event", err)
	}
	inboxID := found.JSON200.Items[0].Id
	got, err := c.GetEventTrailWithResponse(ctx, inboxID)
	if err != nil {
		t.Fatalf("trail: %v", err)
	}
	trail := got.JSON200
	if trail.Verification.Outcome != "verified" || trail.Verification.Scheme != "stripe" {
		t.Errorf("verification = %+v", trail.Verification)
	}
	if trail.Deliveries == nil || len(*trail.Deliveries) != 1 || (*trail.Deliveries)[0].Outcome != "accepted" {
		t.Errorf("deliveries = %+v, want one accepted", trail.Deliveries)
	}
	if trail.Effects == nil || len(*trail.Effects) != 1 {
		t.Fatalf("effects = %+v, want the grant", trail.Effects)
	}
	grant := (*trail.Effects)[0]
	wantKey := f.sourceID + "/" + f.account + "/" + invoiceID + "/" + credits.Operation
	if grant.Group != suite.group || grant.Kind != "grant" || grant.BusinessKey != wantKey || !grant.ThisEvent ||
		grant.WorkspaceId == nil || *grant.WorkspaceId != f.workspaceID || grant.Credits == nil || *grant.Credits != 100 {
		t.Errorf("grant = %+v, want %s's grant of 100 to %s by this event", grant, wantKey, f.workspaceID)
	}
	at := grant.AppliedAt
	if at.Topic == nil || at.Partition == nil || at.Offset == nil {
		t.Fatalf("the grant names no Kafka record: %+v", at)
	}
	if *at.Topic != suite.topics.Resource("invoices") {
		t.Errorf("applied from topic %s", *at.Topic)
	}

	// The grant's confirmation e-mail, sent to the dispatcher's service by
	// the deliverer, is among the trail's sends once the service took it.
	email := wantKey + "/confirmation-email"
	testenv.Eventually(t, time.Minute, "the confirmation e-mail in the trail's sends", func() (bool, error) {
		again, err := c.GetEventTrailWithResponse(ctx, inboxID)
		if err != nil {
			return false, fmt.Errorf("trail: %w", err)
		}
		for _, send := range deref(again.JSON200.Sends) {
			if send.IdempotencyKey == email && send.Status == http.StatusAccepted && send.Group == suite.topics.Resource("dispatch") {
				return true, nil
			}
		}
		return false, fmt.Errorf("sends %+v, want %s", again.JSON200.Sends, email)
	})

	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		*at.Topic: {*at.Partition: kgo.NewOffset().At(*at.Offset)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	pollCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var rec *kgo.Record
	for rec == nil && pollCtx.Err() == nil {
		cl.PollFetches(pollCtx).EachRecord(func(r *kgo.Record) {
			if rec == nil {
				rec = r
			}
		})
	}
	if rec == nil {
		t.Fatalf("no record at %s/%d@%d", *at.Topic, *at.Partition, *at.Offset)
	}
	if h := headerMap(rec); rec.Offset != *at.Offset || h[envelope.HeaderID] != eventID || h[envelope.HeaderTenantID] != f.tenantID {
		t.Errorf("record at %s/%d@%d is %s of tenant %s (offset %d), want %s", *at.Topic, *at.Partition, *at.Offset,
			h[envelope.HeaderID], h[envelope.HeaderTenantID], rec.Offset, eventID)
	}

	// Another tenant's token learns nothing: 404, as for an id that does
	// not exist.
	other := newTenant(t)
	stranger, err := adminclient.New(suite.adminURL, adminToken(t, admintoken.RoleRead, other.tenantID))
	if err != nil {
		t.Fatal(err)
	}
	var p *adminclient.Problem
	if _, err := stranger.GetEventTrailWithResponse(ctx, inboxID); !errors.As(err, &p) || p.Status == nil || *p.Status != http.StatusNotFound {
		t.Errorf("another tenant's token read the trail: %v, want a 404 problem", err)
	}
}
