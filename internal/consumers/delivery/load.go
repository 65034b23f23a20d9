package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// message is one pending delivery: what to send and where it stands.
type message struct {
	id                       int64
	webhookID                string
	attempt                  int // of the next request
	nextAt, createdAt        time.Time
	key                      string
	inboxID                  *int64
	body                     []byte
	eventID, eventType, src  string
	subject                  string
	eventTime                *time.Time
	traceparent, contentType string
	tenantID                 string
	// rulesVersion is the version of the endpoint's rules the delivery
	// was created under (0: unknown).
	rulesVersion int64
	// missing: the body is no longer kept (payload horizon, erasure).
	missing bool
	// parked: held from below the endpoint's mark (its exceptions, a
	// retry's range), which passed it already.
	parked bool
}

// pendingRange reads endpoint's pending deliveries with ids in [lo, hi],
// in order, at most n, and with bodies their events' bodies where the
// inbox has them (at most 64 KiB each; those it lacks are loaded when
// sent).
func (d *Deliverer) pendingRange(ctx context.Context, endpoint string, lo, hi int64, n int, bodies bool) ([]message, error) {
	rows, err := d.pool.Query(ctx, pendingSQL, endpoint, lo, hi, n, bodies)
	if err != nil {
		return nil, fmt.Errorf("read pending deliveries: %w", err)
	}
	msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (message, error) {
		var (
			m     message
			found bool
		)
		err := r.Scan(append(m.fields(), &found)...)
		m.attempt++ // the next request's number
		m.missing = m.inboxID != nil && found && m.body == nil
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	return msgs, nil
}

// heldAmong reads endpoint's deliveries still pending among ids, and those
// below mark with a queue row.
func (d *Deliverer) heldAmong(ctx context.Context, endpoint string, ids []int64, mark int64) ([]message, error) {
	rows, err := d.pool.Query(ctx, heldSQL, endpoint, ids, mark)
	if err != nil {
		return nil, fmt.Errorf("read deliveries below the mark: %w", err)
	}
	return collectMessages(rows)
}

// redone reads the deliveries pending in the ranges retries and replays of
// endpoint moved back (at most n a range), and deletes the ranges holding
// none.
func (d *Deliverer) redone(ctx context.Context, endpoint string, n int) ([]message, error) {
	rows, err := d.pool.Query(ctx, redoSQL, endpoint, n)
	if err != nil {
		return nil, fmt.Errorf("read retried deliveries: %w", err)
	}
	return collectMessages(rows)
}

// keyAfter reads the next n pending deliveries of endpoint's key after id.
func (d *Deliverer) keyAfter(ctx context.Context, endpoint, key string, after int64, n int) ([]message, error) {
	rows, err := d.pool.Query(ctx, keyNextSQL, endpoint, key, after, n)
	if err != nil {
		return nil, fmt.Errorf("read the next deliveries of a key: %w", err)
	}
	return collectMessages(rows)
}

// fields are where a delivery's columns are read into, in the statements'
// order.
func (m *message) fields() []any {
	return []any{&m.id, &m.webhookID, &m.attempt, &m.nextAt, &m.createdAt, &m.key, &m.inboxID, &m.body, &m.eventID,
		&m.eventType, &m.src, &m.subject, &m.eventTime, &m.traceparent, &m.contentType, &m.tenantID, &m.rulesVersion}
}

func collectMessages(rows pgx.Rows) ([]message, error) {
	msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (message, error) {
		var m message
		err := r.Scan(m.fields()...)
		m.attempt++ // the next request's number
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("read deliveries: %w", err)
	}
	return msgs, nil
}

// loadBodies fills, in one query, the bodies the inbox keeps for the items
// about to be sent, and returns those whose inbox row this connection does
// not see yet (a walsender may send a commit before the committing backend
// is visible to others): they go back, uncounted, for a moment.
func (d *Deliverer) loadBodies(ctx context.Context, tenant string, items []*item) (early []*item, err error) {
	var ids []int64
	for _, it := range items {
		if it.body == nil && it.inboxID != nil && !it.missing {
			ids = append(ids, *it.inboxID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	type stored struct {
		body          []byte
		there, before bool
	}
	bodies := make(map[int64]stored, len(ids))
	rows, err := d.pool.Query(ctx, bodiesSQL, ids, tenant)
	if err != nil {
		return nil, fmt.Errorf("load bodies: %w", err)
	}
	var (
		id int64
		s  stored
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &s.there, &s.body, &s.before}, func() error {
		bodies[id] = s
		return nil
	}); err != nil {
		return nil, fmt.Errorf("load bodies: %w", err)
	}
	for _, it := range items {
		if it.body != nil || it.inboxID == nil || it.missing {
			continue
		}
		b := bodies[*it.inboxID]
		if !b.there && !b.before {
			early = append(early, it)
			continue
		}
		it.body, it.missing = b.body, b.body == nil
	}
	return early, nil
}

// notVisibleYet is how soon a delivery whose event was not visible yet is
// tried again.
const notVisibleYet = 50 * time.Millisecond
