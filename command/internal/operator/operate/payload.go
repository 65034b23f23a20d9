package operate

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/internal/consumers"
)

//go:embed sql/erased.sql
var erasedSQL string

// PayloadState says whether an event's content is still kept.
type PayloadState string

const (
	// PayloadKept: Body is the verified body, byte for byte.
	PayloadKept PayloadState = "kept"
	// PayloadExpired: past the payload horizon; the event key remains.
	PayloadExpired PayloadState = "expired"
	// PayloadErased: purged on request (sluice erase).
	PayloadErased PayloadState = "erased"
)

// Payload is an event's content. Every operation that returns one is a
// payload read, which the admin API audits.
type Payload struct {
	State PayloadState `json:"state"`
	Body  []byte       `json:"body,omitempty"`
}

// EventPayload returns the verified body of inbox row id (a payload read).
func (o *Operator) EventPayload(ctx context.Context, scope *Scope, id int64) (Payload, error) {
	ev, err := o.event(ctx, scope, id)
	if err != nil {
		return Payload{}, err
	}
	return o.payload(ctx, ev.ID, ev.TenantID)
}

// payload loads a body the way consumers load a claimed one (one reader of
// the payload tables and their horizons).
func (o *Operator) payload(ctx context.Context, inboxID int64, tenant string) (Payload, error) {
	body, err := consumers.ClaimedBody(ctx, o.pool, inboxID, tenant)
	switch {
	case err == nil:
		return Payload{State: PayloadKept, Body: body}, nil
	case errors.Is(err, consumers.ErrPayloadExpired):
		var erased bool
		if err := o.pool.QueryRow(ctx, erasedSQL, inboxID).Scan(&erased); err == nil && erased {
			return Payload{State: PayloadErased}, nil
		}
		return Payload{State: PayloadExpired}, nil
	}
	return Payload{}, fmt.Errorf("payload of event %d: %w", inboxID, err)
}
