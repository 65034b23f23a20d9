package consumers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/encoding/json"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/trace"

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

	span   trace.Span   // the record's process span; nil when tracing is off
	tracer trace.Tracer // effects' spans
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
	return ClaimedBody(ctx, tx, inboxID, r.Event.TenantID)
}

// ErrPayloadExpired: the claimed body is gone, past the payload horizon or
// erased on request; the event was accepted, its content is no longer kept.
// Permanent: retrying reads the same absence.
var ErrPayloadExpired = errors.New("consumers: payload expired")

// ClaimedBody loads the body of inbox row inboxID of tenant. A body that was
// kept and is gone is ErrPayloadExpired (with why), never "not found": that
// answer is for an id that never was this tenant's.
func ClaimedBody(ctx context.Context, q Querier, inboxID int64, tenant string) ([]byte, error) {
	var (
		kept, erased, beforeKeys bool
		body                     []byte
	)
	if err := q.QueryRow(ctx, claimSQL, inboxID, tenant).Scan(&kept, &erased, &body, &beforeKeys); err != nil {
		return nil, fmt.Errorf("load claimed body %d: %w", inboxID, err)
	}
	switch {
	case body != nil:
		return body, nil
	case erased:
		return nil, Permanent(fmt.Errorf("inbox row %d: %w (erased on request)", inboxID, ErrPayloadExpired))
	case kept:
		return nil, Permanent(fmt.Errorf("inbox row %d: %w (past the payload horizon)", inboxID, ErrPayloadExpired))
	case beforeKeys:
		return nil, Permanent(fmt.Errorf("inbox row %d: %w (past the key horizon)", inboxID, ErrPayloadExpired))
	default:
		return nil, Permanentf("claimed inbox row %d of tenant %s not found", inboxID, tenant)
	}
}

// Querier is a transaction or a pool.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// InboxID is the processing id as a nullable column value.
func (r Record) InboxID() *int64 {
	if id, err := strconv.ParseInt(r.Event.InboxID, 10, 64); err == nil {
		return &id
	}
	return nil
}

func parseRecord(r *kgo.Record) (Record, error) {
	ev, err := envelope.ParseRecord(r.Headers)
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
