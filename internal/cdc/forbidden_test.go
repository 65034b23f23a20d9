package cdc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A record whose topic the relay's Kafka user may not write (an ACL
// missing, a grant lost) is the same stall as a missing topic for every
// tenant: it is held for the grace, then parked with its reason, the slot
// moves past it, and nothing else waits; once WRITE is granted the command
// publishes it.
func TestRecordForATopicTheRelayMayNotWriteIsParked(t *testing.T) {
	t.Parallel()
	sk := testenv.RequireSecureKafka(t)
	b := setupWith(t, "forbidden", sk.Plain)
	ctx := context.Background()
	forbidden := b.prefix + ".notifications"
	b.createTopic(t, forbidden, 3)
	user, password := sk.NewUser(t, "cdcforbidden")
	sk.Grant(t, "User:"+user, kafka.ACL{Name: b.topic, Op: kafka.Write}, kafka.ACL{Name: b.topic, Op: kafka.Describe},
		kafka.ACL{Name: forbidden, Op: kafka.Describe})
	opts, err := sk.SASL(user, password).Options()
	if err != nil {
		t.Fatal(err)
	}
	c := b.collect()
	const grace = 3 * time.Second
	r := b.startRelay(Config{MissingTopicGrace: grace}, b.db.URL, opts...)
	r.waitStreaming(t)
	_, pid := b.slotHolder(ctx)

	insertRows(t, b, "before", 20)
	id, pos := missingRow(t, b, forbidden)
	committed := time.Now()
	insertRows(t, b, "after", 20)

	b.movesPast(t, c, id, pos, committed, grace, pid)
	var reason string
	if err := b.pool.QueryRow(ctx, `SELECT reason FROM cdc_parked WHERE topic = $1 AND headers->>'sluice_outboxid' = $2`, forbidden, id).Scan(&reason); err != nil {
		t.Fatalf("the record is not parked: %v", err)
	}
	if !strings.Contains(reason, "TOPIC_AUTHORIZATION_FAILED") || !strings.Contains(reason, "may not write") {
		t.Errorf("parked with reason %q, want the missing grant", reason)
	}
	if n := r.parkedBy(t, ReasonNotAuthorized); n != 1 {
		t.Errorf("parked records counted as not authorized: %v, want 1", n)
	}

	// Granted, the record is published by the command's work, as the
	// relay's user.
	sk.Grant(t, "User:"+user, kafka.ACL{Name: forbidden, Op: kafka.Write})
	if _, err := PublishParked(ctx, b.pool, opts, ParkedSelection{Topic: forbidden}); err != nil {
		t.Fatalf("publishing once WRITE is granted: %v", err)
	}
	if got := b.topicRecords(t, forbidden); len(got) != 1 || got[id] != 1 {
		t.Errorf("the topic holds %v (outbox id: times), want the row %s once", got, id)
	}
	if _, err := PublishParked(ctx, b.pool, []kgo.Opt{kgo.SeedBrokers(b.brokers...)}, ParkedSelection{Topic: forbidden}); err != nil && !errors.Is(err, ErrAlreadyReleased) {
		t.Errorf("publishing again: %v", err)
	}
}
