package effect

import (
	"context"

	"github.com/sluicehq/sluice/internal/consumers"
)

// Intent is a message for another service caused by an effect (a
// confirmation, an alert). Emitted with Tx.Emit, it is an outbox row of
// the effect's transaction: it exists exactly when the effect does, and
// Sluice carries it to Kafka and on to the deployment's endpoint
// (--dispatch-url) and to tenants' endpoints whose filters take its type.
type Intent struct {
	// Type is the message's event type (ce_type), e.g. orders.confirmed.
	Type string
	// Key is its idempotency key (ce_id, a receiver's webhook-id): the
	// business key of the effect and what the message is, e.g.
	// rec.BusinessKey(orderID, "confirmation"), the same on every replay,
	// so a receiver that sees it twice knows it is one message.
	Key string
	// ObjectType and Subject name the resource the message is about: its
	// Kafka key is (tenant, object type, subject), so a resource's
	// messages keep their order.
	ObjectType, Subject string
	// Payload is marshalled to JSON as the message's body.
	Payload any
	// Topic is the suffix of the topic it is published to. Default
	// "notifications", which the deployment's endpoint and tenants'
	// endpoints read.
	Topic string
}

// notifications is the topic intents go to by default.
const notifications = "notifications"

func (tx *Tx) intent(ctx context.Context, rec Record, in Intent) consumers.Intent {
	topic := in.Topic
	if topic == "" {
		topic = notifications
	}
	return consumers.NewIntent(ctx, tx.topics.Resource(topic), *rec.rec, in.Type, in.Key, in.ObjectType, in.Subject, in.Payload)
}
