package delivery

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// A sender makes the attempts of one endpoint's loop at its target, of
// one kind: an HTTP request (send.go), a message published to RabbitMQ
// (rabbitmq.go), a record produced to the tenant's Kafka (kafkatarget.go),
// a message sent to an SQS-compatible queue (sqstarget.go).
// Everything else is the loop's and the same for every kind: what is sent
// when (order per resource, concurrency, rate), retries and their backoff,
// the breaker, the attempts written to the trail, the metrics, the
// disabling of an endpoint failing for its horizon. A sender dials only
// through the deployment's egress policy.
//
// A loop opens its sender when it starts and closes it when it stops, so
// a connection to a target lives as long as this process owns the
// endpoint, and a change of how the target is reached (Target's
// SameConnection) restarts the loop.
type sender interface {
	// send makes one attempt of m, bounded by the deliverer's Timeout, and
	// says how it went (an Attempt with no error class: the target took
	// it), and the least wait the target asked for before the next
	// (HTTP's Retry-After), if any. It is called from up to the endpoint's
	// concurrency goroutines at once.
	send(ctx context.Context, t *endpoints.Target, m message) (endpoints.Attempt, time.Duration)
	// close lets go of what the sender holds; no send runs then.
	close()
}

// newSender is the sender of t's kind, for up to slots sends at once.
func (d *Deliverer) newSender(t endpoints.Target, slots int) sender {
	switch t.Kind {
	case endpoints.KindRabbitMQ:
		return newRabbitSender(d, t, slots)
	case endpoints.KindKafka:
		return newKafkaSender(d, t, slots)
	case endpoints.KindSQS:
		return newSQSSender(d, t, slots)
	}
	return httpSender{d: d}
}
