package endpoints

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/fan_out.sql
var fanOutSQL string

// NewDelivery is one event to deliver to one endpoint.
type NewDelivery struct {
	EndpointID, TenantID string
	// WebhookID is the id the endpoint sees on every attempt, retry and
	// replay; unique per endpoint, so writing it again inserts nothing.
	WebhookID string
	// Key is the event's Kafka key: its order is kept per key.
	Key string
	// InboxID is the inbox row that holds the body, loaded when sent; nil
	// keeps Payload in the row instead (an event with no inbox row).
	InboxID                             *int64
	Payload                             []byte
	EventID, EventType, Source, Subject string
	EventTime                           *time.Time
	TraceParent, ContentType            string
	Topic                               string
	Partition                           int32
	Offset                              int64
	// AcceptedAt is the event's Kafka timestamp: where accepted-to-delivered
	// starts.
	AcceptedAt time.Time
	// RulesVersion is the version of the endpoint's rules that took the
	// event (Subscription.RulesVersion).
	RulesVersion int64
}

// Fanout is a batch of deliveries to write in one statement.
type Fanout struct {
	endpoint, tenant, webhookID, key    []string
	inbox                               []*int64
	payload                             [][]byte
	eventID, eventType, source, subject []string
	eventTime                           []*time.Time
	traceparent, contentType, topic     []string
	partition                           []int32
	offset                              []int64
	accepted                            []time.Time
	rulesVersion                        []int64
}

// Add appends d to the batch.
func (f *Fanout) Add(d NewDelivery) {
	f.endpoint = append(f.endpoint, d.EndpointID)
	f.tenant = append(f.tenant, d.TenantID)
	f.webhookID = append(f.webhookID, d.WebhookID)
	f.key = append(f.key, d.Key)
	f.inbox = append(f.inbox, d.InboxID)
	f.payload = append(f.payload, d.Payload)
	f.eventID = append(f.eventID, d.EventID)
	f.eventType = append(f.eventType, d.EventType)
	f.source = append(f.source, d.Source)
	f.subject = append(f.subject, d.Subject)
	f.eventTime = append(f.eventTime, d.EventTime)
	f.traceparent = append(f.traceparent, d.TraceParent)
	f.contentType = append(f.contentType, d.ContentType)
	f.topic = append(f.topic, d.Topic)
	f.partition = append(f.partition, d.Partition)
	f.offset = append(f.offset, d.Offset)
	f.accepted = append(f.accepted, d.AcceptedAt)
	f.rulesVersion = append(f.rulesVersion, d.RulesVersion)
}

// Len is the number of deliveries in the batch.
func (f *Fanout) Len() int { return len(f.endpoint) }

// Write inserts the batch in tx, in its order (a delivery's id is its place
// in its key's order), skipping those written already (a rewind inserts
// nothing), queues each new one and tells each endpoint's owner at commit.
func (f *Fanout) Write(ctx context.Context, tx pgx.Tx) error {
	if f.Len() == 0 {
		return nil
	}
	var told int
	err := tx.QueryRow(ctx, fanOutSQL, f.endpoint, f.tenant, f.webhookID, f.key, f.inbox, f.payload, f.eventID, f.eventType,
		f.source, f.subject, f.eventTime, f.traceparent, f.contentType, f.topic, f.partition, f.offset, f.accepted, f.rulesVersion).Scan(&told)
	if err != nil {
		return fmt.Errorf("write %d deliveries: %w", f.Len(), err)
	}
	return nil
}
