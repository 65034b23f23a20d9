package consumers

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/encoding/json"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

//go:embed sql/claim.sql
var claimSQL string

// Record is a Kafka record with its parsed envelope.
type Record struct {
	*kgo.Record
	Event envelope.Event
	// Prepared is what Handler.Prepare learned outside the transaction, handed
	// to Apply; nil for handlers that prepare nothing.
	Prepared any
}

// Body returns the verified body: the record value, or, for a body that
// travelled by claim, the inbox row it names (same tenant only).
func (r Record) Body(ctx context.Context, tx pgx.Tx) ([]byte, error) {
	if r.Event.Claim == "" {
		return r.Value, nil
	}
	inboxID, err := strconv.ParseInt(r.Event.InboxID, 10, 64)
	if err != nil {
		return nil, Permanentf("claim without inbox id: %q", r.Event.InboxID)
	}
	var body []byte
	if err := tx.QueryRow(ctx, claimSQL, inboxID, r.Event.TenantID).Scan(&body); err != nil {
		return nil, fmt.Errorf("load claimed body %d: %w", inboxID, err)
	}
	return body, nil
}

// InboxID is the processing id as a nullable column value.
func (r Record) InboxID() *int64 {
	if id, err := strconv.ParseInt(r.Event.InboxID, 10, 64); err == nil {
		return &id
	}
	return nil
}

// BusinessKey is (source, source account, object id, operation): the
// identity of one operation, whatever the number of events that ask for it.
func (r Record) BusinessKey(objectID, operation string) string {
	return r.Event.SourceID + "/" + r.Event.SourceAccount + "/" + objectID + "/" + operation
}

func parseRecord(r *kgo.Record) (Record, error) {
	ev, err := envelope.Parse(envelope.HeaderMap(r.Headers))
	if err != nil {
		return Record{Record: r}, Permanent(err)
	}
	return Record{Record: r, Event: ev}, nil
}

// Decode loads the body (see Body) and unmarshals it into v. A body that is
// not the JSON v expects is a permanent failure: retrying reads the same bytes.
// segmentio's decoder accepts and refuses what encoding/json does, for a
// fraction of its cost: decoding bodies is a large share of a consumer's CPU.
func (r Record) Decode(ctx context.Context, tx pgx.Tx, v any) error {
	body, err := r.Body(ctx, tx)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return Permanentf("%s body: %w", r.Event.Type, err)
	}
	return nil
}
