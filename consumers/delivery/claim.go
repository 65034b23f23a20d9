package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// message is one claimed delivery: what to send and where it stands.
type message struct {
	id                       int64
	webhookID                string
	attempt                  int
	createdAt                time.Time
	key                      string
	inboxID                  *int64
	body                     []byte
	eventID, eventType, src  string
	subject                  string
	eventTime                *time.Time
	traceparent, contentType string
	tenantID                 string
	// missing: the body is no longer kept (payload horizon, erasure).
	missing bool
}

// claim leases up to n of t's due heads, parking the deliveries it finds
// waiting behind their key's head.
func (d *Deliverer) claim(ctx context.Context, t *endpoints.Target, n int) ([]message, error) {
	rows, err := d.pool.Query(ctx, candidatesSQL, t.ID, 4*n+16, t.Ordered)
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	var (
		heads, parked []int64
		seen          []string
		id            int64
		xmin          string
		head          bool
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &xmin, &head}, func() error {
		switch {
		case !head:
			parked, seen = append(parked, id), append(seen, xmin)
		case len(heads) < n:
			heads = append(heads, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("due deliveries: %w", err)
	}
	if len(parked) > 0 {
		if _, err := d.pool.Exec(ctx, parkSQL, parked, seen); err != nil {
			return nil, fmt.Errorf("park deliveries: %w", err)
		}
	}
	if len(heads) == 0 {
		return nil, nil
	}
	return d.lease(ctx, t, heads)
}

// lease claims heads for one attempt and loads the bodies the inbox holds.
func (d *Deliverer) lease(ctx context.Context, t *endpoints.Target, heads []int64) ([]message, error) {
	// Long enough for a loop's whole buffer to be sent one slot-full after
	// another, with room to spare.
	lease := time.Duration(bufferedPerSlot+1)*d.cfg.Timeout + 30*time.Second
	rows, err := d.pool.Query(ctx, leaseSQL, heads, lease.Seconds())
	if err != nil {
		return nil, fmt.Errorf("lease deliveries: %w", err)
	}
	msgs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (message, error) {
		var m message
		err := r.Scan(&m.id, &m.webhookID, &m.attempt, &m.createdAt, &m.key, &m.inboxID, &m.body, &m.eventID,
			&m.eventType, &m.src, &m.subject, &m.eventTime, &m.traceparent, &m.contentType, &m.tenantID)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("lease deliveries: %w", err)
	}
	return d.loadBodies(ctx, t.TenantID, msgs)
}

// loadBodies fills the bodies kept in the inbox, in one query, and gives
// back the deliveries whose inbox row this connection does not see yet.
func (d *Deliverer) loadBodies(ctx context.Context, tenant string, msgs []message) ([]message, error) {
	var ids []int64
	for _, m := range msgs {
		if m.body == nil && m.inboxID != nil {
			ids = append(ids, *m.inboxID)
		}
	}
	if len(ids) == 0 {
		return msgs, nil
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
	ready, early := msgs[:0], []int64(nil)
	for _, m := range msgs {
		if m.body == nil && m.inboxID != nil {
			b := bodies[*m.inboxID]
			if !b.there && !b.before {
				early = append(early, m.id)
				continue
			}
			m.body, m.missing = b.body, b.body == nil
		}
		ready = append(ready, m)
	}
	if len(early) > 0 {
		if _, err := d.pool.Exec(ctx, releaseSQL, early, time.Now().Add(notVisibleYet)); err != nil {
			return nil, fmt.Errorf("release deliveries: %w", err)
		}
	}
	return ready, nil
}

// notVisibleYet is how soon a delivery whose event was not visible yet is
// claimed again.
const notVisibleYet = 50 * time.Millisecond
