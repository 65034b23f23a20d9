package effect

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Once records an operation under its business key, at most once. insert
// is a statement that records it in one of your tables and changes nothing
// when its key is taken, e.g.
//
//	INSERT INTO reservations (business_key, sku, quantity, event_id, inbox_id)
//	VALUES ($1, $2, $3, $4, $5) ON CONFLICT (business_key) DO NOTHING
//
// Once reports whether this call recorded it. Apply the operation's other
// effects (a counter's change, an intent) only when it did: a redelivery,
// a rewind, a replayed dead letter or a second event asking for the same
// operation (a webhook and its repair) then change nothing.
//
// The key is the operation's, not the event's: Record.BusinessKey(object,
// operation). Keyed by the event id instead, two events about one
// operation would apply it twice.
//
// A different effect asked under a taken key (an order line's quantity
// changed under one id) is not applied either; Same tells it from a
// repetition, so it becomes a dead letter rather than silence.
func Once(ctx context.Context, tx pgx.Tx, insert string, args ...any) (bool, error) {
	tag, err := tx.Exec(ctx, insert, args...)
	if err != nil {
		return false, fmt.Errorf("record operation: %w", err)
	}
	switch tag.RowsAffected() {
	case 0:
		return false, nil
	case 1:
		return true, nil
	default:
		return false, Permanentf("record operation: %d rows recorded, want one per business key (is its key unique?)", tag.RowsAffected())
	}
}

// Same says whether the operation a taken business key recorded is the one
// asked for again. query returns one boolean: whether the stored row holds
// the content in args, e.g.
//
//	SELECT quantity = $2 FROM reservations WHERE business_key = $1
//
// A false is ErrKeyTaken, permanent: the record becomes a dead letter
// naming the key for an operator, and the stored effect stays.
func Same(ctx context.Context, tx pgx.Tx, query string, args ...any) error {
	var same bool
	if err := tx.QueryRow(ctx, query, args...).Scan(&same); err != nil {
		return fmt.Errorf("compare operation: %w", err)
	}
	if !same {
		return Permanent(fmt.Errorf("%w (%v)", ErrKeyTaken, args))
	}
	return nil
}

// Project writes a projection's row only when the event's version
// supersedes the stored one. upsert inserts the row, or updates it only
// when the new version is greater, e.g.
//
//	INSERT INTO orders AS o (order_id, status, version, inbox_id)
//	VALUES ($1, $2, $3, $4)
//	ON CONFLICT (order_id) DO UPDATE
//	    SET status = EXCLUDED.status, version = EXCLUDED.version, inbox_id = EXCLUDED.inbox_id
//	    WHERE (o.version, o.inbox_id) < (EXCLUDED.version, EXCLUDED.inbox_id)
//
// Any arrival order of an object's events then ends in the same row, and a
// replay changes nothing. The version is the provider's (a counter in the
// payload, or the event time), with Envelope.InboxID after it so two
// events of one version are decided the same way on every replay (the one
// Sluice accepted last wins), never by their random ids; an equal version
// and id is a repetition and keeps the stored row. A final state (an
// order cancelled) outranks every other: put it first in the version.
//
// Project reports whether the row was written.
func Project(ctx context.Context, tx pgx.Tx, upsert string, args ...any) (bool, error) {
	tag, err := tx.Exec(ctx, upsert, args...)
	if err != nil {
		return false, fmt.Errorf("project: %w", err)
	}
	return tag.RowsAffected() > 0, nil
}
