package endpoints

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
)

// A delivery's request is not stored: a delivery keeps two row operations
// (its insert and its settling update), and the request is rebuilt, when
// asked, from what already is (the event, the delivery's ids, the
// endpoint's settings and secrets). Signature values and static header
// values are never shown, so nothing is lost by not keeping them.

//go:embed sql/delivery_request.sql
var deliveryRequestSQL string

// SentHeader is one header of a delivery's request (or of a RabbitMQ message,
// a Kafka record: the same names).
type SentHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Masked: the value is a secret (a signature, a static header's value)
	// and Value says what stands there instead.
	Masked bool `json:"masked,omitempty" doc:"The value is a secret (a signature, a static header's value) and is not shown: value says what stands there."`
}

// Envelope is what a delivery's headers say of its event.
type Envelope struct {
	WebhookID, EventID, EventType, Source, Subject, Traceparent string
	EventTime                                                   *time.Time
}

// Headers are the Standard Webhooks headers (id, timestamp at, signature)
// and the CloudEvents binary-mode attributes with the trace, in the order
// sent: the one list every kind of target sends and the rebuilt request
// shows.
func (e Envelope) Headers(at time.Time, signature string) []SentHeader {
	h := make([]SentHeader, 0, 10)
	h = append(h, SentHeader{Name: standardwebhooks.IDHeader, Value: e.WebhookID},
		SentHeader{Name: standardwebhooks.TimestampHeader, Value: strconv.FormatInt(at.Unix(), 10)},
		SentHeader{Name: standardwebhooks.SignatureHeader, Value: signature},
		SentHeader{Name: "ce-specversion", Value: "1.0"}, SentHeader{Name: "ce-id", Value: e.EventID},
		SentHeader{Name: "ce-type", Value: e.EventType}, SentHeader{Name: "ce-source", Value: e.Source})
	if e.Subject != "" {
		h = append(h, SentHeader{Name: "ce-subject", Value: e.Subject})
	}
	if e.EventTime != nil {
		h = append(h, SentHeader{Name: "ce-time", Value: e.EventTime.UTC().Format(time.RFC3339Nano)})
	}
	if e.Traceparent != "" {
		h = append(h, SentHeader{Name: "traceparent", Value: e.Traceparent})
	}
	return h
}

// UserAgent names Sluice to receivers.
const UserAgent = "Sluice-Destinations/1"

// RequestAsSent is a delivery's request as sent, rebuilt.
type RequestAsSent struct {
	Method string     `json:"method" doc:"POST for an http endpoint; empty for rabbitmq and kafka targets, which get a message or a record with the same headers."`
	URL    string     `json:"url" doc:"The endpoint's URL now (or its target, for rabbitmq and kafka); a request made before the URL was changed went to the one of its time."`
	At     *time.Time `json:"at,omitempty" doc:"The latest request's time, which its webhook-timestamp and signatures carry; absent before the first request."`
	// Headers are the request's, static ones first, secrets masked.
	Headers []SentHeader `json:"headers" nullable:"false" doc:"Every header sent: the endpoint's static headers (values masked), Content-Type, User-Agent, the Standard Webhooks headers (each signature masked) and the CloudEvents attributes; an endpoint's own headers never replace Sluice's."`
	// BodyKept is false once the body is gone (payload horizon, erasure):
	// no request can send it again either.
	BodyKept bool   `json:"body_kept" doc:"False once the event's body is gone (past the payload horizon, or erased): no request can send it again."`
	Body     []byte `json:"body,omitempty" doc:"The body exactly as sent: the event as received."`
}

// SentRequest rebuilds delivery id's latest request: method, URL, headers
// (signature and static header values masked) and body. A delivery not
// yet attempted shows the request its next attempt makes, without a time.
func (s Store) SentRequest(ctx context.Context, id int64) (RequestAsSent, error) {
	d, err := s.Delivery(ctx, id)
	if err != nil {
		return RequestAsSent{}, err
	}
	e, err := s.GetEndpoint(ctx, d.EndpointID)
	if err != nil {
		return RequestAsSent{}, err
	}
	env := Envelope{WebhookID: d.WebhookID, EventID: d.EventID, EventType: d.EventType}
	var contentType string
	var body []byte
	err = s.Pool.QueryRow(ctx, deliveryRequestSQL, id).Scan(&env.Source, &env.Subject, &env.EventTime, &env.Traceparent, &contentType, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return RequestAsSent{}, refusal.NoSuch("delivery", id)
	}
	if err != nil {
		return RequestAsSent{}, fmt.Errorf("read delivery %d's request: %w", id, err)
	}
	r := RequestAsSent{URL: e.URL, Body: body, BodyKept: body != nil}
	if e.Kind == "" || e.Kind == "http" {
		r.Method = "POST"
	}
	at := time.Now()
	if n := len(d.History); n > 0 {
		at = d.History[n-1].At
		r.At = &at
	}
	for _, name := range e.Headers {
		r.Headers = append(r.Headers, SentHeader{Name: name, Value: "the endpoint's value, never shown", Masked: true})
	}
	r.Headers = append(r.Headers, SentHeader{Name: "Content-Type", Value: contentType}, SentHeader{Name: "User-Agent", Value: UserAgent})
	for _, h := range env.Headers(at, "") {
		if h.Name == standardwebhooks.SignatureHeader {
			h.Value, h.Masked = maskedSignatures(e.ActiveSecrets), true
		}
		r.Headers = append(r.Headers, h)
	}
	return r, nil
}

// maskedSignatures says what a signature header holds without its values:
// one v1 signature per secret in force.
func maskedSignatures(n int) string {
	sigs := make([]string, n)
	for i := range sigs {
		sigs[i] = "v1,…"
	}
	return strings.Join(sigs, " ")
}

// SyntheticTestType is the type of the test event Sluice makes up when no
// type is chosen.
const SyntheticTestType = "sluice.test"

// TestEvent is what a test of an endpoint sends: a type and its body; the
// zero TestEvent is the synthetic sluice.test.
type TestEvent struct {
	Type string
	Body []byte
}
