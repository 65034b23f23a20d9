package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stripe/stripe-go/v82/webhook"
)

// source is a Stripe source the comparator accepts webhooks for.
type source struct {
	id, tenant, account, secret string
}

// invoiceEvent is what the handler reads of a Stripe event: what the grant
// needs, typed, as encoding/json gives it.
type invoiceEvent struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Created int64  `json:"created"`
	Data    struct {
		Object struct {
			ID         string `json:"id"`
			Object     string `json:"object"`
			Customer   string `json:"customer"`
			AmountPaid int64  `json:"amount_paid"`
			Currency   string `json:"currency"`
			Status     string `json:"status"`
		} `json:"object"`
	} `json:"data"`
}

// outcome is what a group commit made of a delivery.
type outcome int

const (
	stored    outcome = iota // a new event key: its inbox row and job committed
	duplicate                // the key was taken by the same bytes
	conflict                 // the key was taken by other content: kept aside
	undecided                // a concurrent batch took the key: the provider retries
)

// delivery is one verified webhook waiting for its group commit.
type delivery struct {
	src      *source
	ev       invoiceEvent
	body     []byte
	sum      [32]byte
	received time.Time
	done     chan outcome
	failed   chan error
}

// handle serves POST /v1/ingest/{source}: authenticate over the raw body,
// parse, then wait for the group commit; 202 for a new event, 200 for one
// already stored (or kept as a conflict), 5xx when it is not known to be
// committed, so that the provider retries.
func (c *committer) handle(sources map[string]*source) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		src := sources[r.PathValue("source")]
		if src == nil {
			http.Error(w, "unknown source", http.StatusNotFound)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := webhook.ValidatePayload(body, r.Header.Get("Stripe-Signature"), src.secret); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		d := &delivery{src: src, body: body, sum: sha256.Sum256(body), received: time.Now(),
			done: make(chan outcome, 1), failed: make(chan error, 1)}
		if err := json.Unmarshal(body, &d.ev); err != nil || d.ev.ID == "" || d.ev.Data.Object.Object != "invoice" ||
			d.ev.Data.Object.ID == "" || d.ev.Data.Object.Customer == "" {
			http.Error(w, "not an invoice event", http.StatusUnprocessableEntity)
			return
		}
		select {
		case c.queue <- d:
		default:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		select {
		case o := <-d.done:
			switch o {
			case stored:
				w.WriteHeader(http.StatusAccepted)
			case duplicate, conflict:
				w.WriteHeader(http.StatusOK)
			default:
				http.Error(w, "not committed", http.StatusServiceUnavailable)
			}
		case <-d.failed:
			http.Error(w, "not committed", http.StatusServiceUnavailable)
		}
	}
}

// committer is the group commit: it takes whatever deliveries are queued
// when it becomes free (up to maxBatch), so a lone request commits at once
// and a flood commits in large batches, as Sluice's ingest does.
type committer struct {
	log      *slog.Logger
	pool     *pgxpool.Pool
	river    *river.Client[pgx.Tx]
	queue    chan *delivery
	maxBatch int
	inserted func(n int) // counts the jobs committed
}

func (c *committer) run(ctx context.Context) {
	batch := make([]*delivery, 0, c.maxBatch)
	for d := range c.queue {
		batch = append(batch[:0], d)
	gather:
		for len(batch) < c.maxBatch {
			select {
			case d, ok := <-c.queue:
				if !ok {
					break gather
				}
				batch = append(batch, d)
			default:
				break gather
			}
		}
		c.commit(ctx, batch)
	}
}

// acceptSQL stores a batch's new event keys and says, per delivery (n), the
// inbox id it was stored under, or the id of the row that held its key
// already and whether that row's bytes are the same. Keys go in key order,
// so concurrent batches take the unique index's locks in one order.
const acceptSQL = `
WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[],
                         $7::timestamptz[], $8::bytea[], $9::bytea[])
        WITH ORDINALITY AS t(tenant_id, source_id, source_account, event_id, event_type, object_id,
                             received_at, body_sha256, body, n)
), ins AS (
    INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_id,
                       received_at, body_sha256, body)
    SELECT tenant_id, source_id, source_account, event_id, event_type, object_id, received_at, body_sha256, body
    FROM input
    ORDER BY source_id, source_account, event_id
    ON CONFLICT ON CONSTRAINT inbox_event_key DO NOTHING
    RETURNING id, source_id, source_account, event_id
)
SELECT input.n, ins.id, stored.id, stored.body_sha256 = input.body_sha256
FROM input
LEFT JOIN ins USING (source_id, source_account, event_id)
LEFT JOIN LATERAL (
    SELECT id, body_sha256 FROM inbox
    WHERE ins.id IS NULL AND inbox.source_id = input.source_id
      AND inbox.source_account = input.source_account AND inbox.event_id = input.event_id
) stored ON true`

// commit stores a batch in one transaction: the inbox rows, the conflicts,
// and a River job per new event, then answers every delivery. A key twice
// in one batch (a redelivery racing its original) is stored once, the later
// copy answered as a duplicate.
func (c *committer) commit(ctx context.Context, batch []*delivery) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	firsts, copies := splitCopies(batch)
	outcomes, err := c.store(ctx, firsts)
	if err != nil {
		c.log.Warn("group commit failed: its deliveries are answered 503", "deliveries", len(batch), "err", err)
	}
	for i, d := range firsts {
		if err != nil {
			d.failed <- err
			continue
		}
		d.done <- outcomes[i]
	}
	for _, d := range copies {
		if err != nil {
			d.failed <- err
			continue
		}
		d.done <- duplicate
	}
}

type eventKey struct{ source, event string }

// splitCopies keeps each event key's first delivery of the batch apart from
// its later copies.
func splitCopies(batch []*delivery) (firsts, copies []*delivery) {
	seen := make(map[eventKey]bool, len(batch))
	for _, d := range batch {
		k := eventKey{d.src.id, d.ev.ID}
		if seen[k] {
			copies = append(copies, d)
			continue
		}
		seen[k] = true
		firsts = append(firsts, d)
	}
	return firsts, copies
}

// store runs the batch's transaction and returns each delivery's outcome.
func (c *committer) store(ctx context.Context, ds []*delivery) ([]outcome, error) {
	n := len(ds)
	tenants, sources, accounts, ids, types, objects := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	received, sums, bodies := make([]time.Time, n), make([][]byte, n), make([][]byte, n)
	for i, d := range ds {
		tenants[i], sources[i], accounts[i] = d.src.tenant, d.src.id, d.src.account
		ids[i], types[i], objects[i] = d.ev.ID, d.ev.Type, d.ev.Data.Object.ID
		received[i], sums[i], bodies[i] = d.received, d.sum[:], d.body
	}
	outcomes := make([]outcome, n)
	var jobs []river.InsertManyParams
	var conflicts []int
	var conflictOf []int64
	err := pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, acceptSQL, tenants, sources, accounts, ids, types, objects, received, sums, bodies)
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		var (
			i                 int
			inboxID, storedID *int64
			same              *bool
		)
		_, err = pgx.ForEachRow(rows, []any{&i, &inboxID, &storedID, &same}, func() error {
			d := ds[i-1]
			switch {
			case inboxID != nil:
				outcomes[i-1] = stored
				jobs = append(jobs, river.InsertManyParams{Args: grantOf(d, *inboxID)})
			case storedID == nil:
				outcomes[i-1] = undecided
			case *same:
				outcomes[i-1] = duplicate
			default:
				outcomes[i-1] = conflict
				conflicts, conflictOf = append(conflicts, i-1), append(conflictOf, *storedID)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("accept: %w", err)
		}
		if err := keepConflicts(ctx, tx, ds, conflicts, conflictOf); err != nil {
			return err
		}
		if len(jobs) > 0 {
			if _, err := c.river.InsertManyTx(ctx, tx, jobs); err != nil {
				return fmt.Errorf("insert jobs: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.inserted(len(jobs))
	return outcomes, nil
}

// keepConflicts stores the deliveries whose key another content holds.
func keepConflicts(ctx context.Context, tx pgx.Tx, ds []*delivery, which []int, inboxIDs []int64) error {
	if len(which) == 0 {
		return nil
	}
	received, bodies := make([]time.Time, len(which)), make([][]byte, len(which))
	for j, i := range which {
		received[j], bodies[j] = ds[i].received, ds[i].body
	}
	_, err := tx.Exec(ctx, `INSERT INTO inbox_conflicts (inbox_id, received_at, body)
		SELECT * FROM unnest($1::bigint[], $2::timestamptz[], $3::bytea[])`, inboxIDs, received, bodies)
	if err != nil {
		return fmt.Errorf("keep conflicts: %w", err)
	}
	return nil
}
