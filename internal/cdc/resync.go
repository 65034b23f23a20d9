package cdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
)

// ResyncResult says what a resync did.
type ResyncResult struct {
	Slot string
	// LSN is where the new slot starts streaming: every row committed before
	// it was re-published from the table, every row after it is streamed.
	LSN       pglogrepl.LSN
	Since     time.Time
	Published int64
}

// ResyncMargin is how much earlier than its `since` a resync re-publishes
// from. A row's created_at is its transaction's start, while the time
// cdc_slots keeps is the commit time of the last transaction the relay
// confirmed: a transaction that began before that commit and committed
// after it (a group commit under load, a process paused mid-transaction)
// has rows older than T that were never confirmed, and a resync from T
// exactly would skip them. Sluice's transactions last seconds; the rows a
// minute before T are published again, which consumers take as the
// redeliveries they are.
const ResyncMargin = time.Minute

// Resync rebuilds the relay's slot after it was lost or invalidated. Holding
// the slot's lock (relays stand by meanwhile), it drops the slot if it still
// exists, creates it again exporting a snapshot, and publishes every outbox
// row created since `since` (less ResyncMargin) that the snapshot sees, in id order, through the
// relay's own publishing path, waiting for every acknowledgement. Rows
// committed after the snapshot are the new slot's to stream: nothing falls in
// between, and for a resource key the re-published rows all precede the
// streamed ones. Rows Kafka already had are published again; consumers are
// idempotent.
func (r *Relay) Resync(ctx context.Context, since time.Time) (ResyncResult, error) {
	res := ResyncResult{Slot: r.cfg.Slot, Since: since}
	if err := ensurePublication(ctx, r.pool, r.cfg.Publication); err != nil {
		return res, err
	}
	l, err := acquireQueued(ctx, r.cfg.DatabaseURL, r.cfg.Slot)
	if err != nil {
		return res, err
	}
	defer l.release()

	conn, err := replicationConn(ctx, r.cfg.DatabaseURL)
	if err != nil {
		return res, err
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := r.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1)`, r.cfg.Slot).Scan(&exists); err != nil {
		return res, fmt.Errorf("look up slot %s: %w", r.cfg.Slot, err)
	}
	if exists {
		// WAIT: a relay that just lost the lock may still be closing its stream.
		if err := pglogrepl.DropReplicationSlot(ctx, conn, r.cfg.Slot, pglogrepl.DropReplicationSlotOptions{Wait: true}); err != nil {
			return res, fmt.Errorf("drop slot %s: %w", r.cfg.Slot, err)
		}
		r.log.Warn("replication slot dropped for resync")
	}
	pos, snapshot, err := createSlotSnapshot(ctx, conn, r.cfg.Slot, "EXPORT_SNAPSHOT")
	if err != nil {
		return res, err
	}
	res.LSN = pos
	r.log.Info("replication slot created for resync", slog.String("lsn", pos.String()), slog.Time("since", since))

	// The snapshot lives until the replication connection's next command:
	// import it first, in a read-only repeatable-read transaction.
	tx, err := r.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return res, fmt.Errorf("begin resync read: %w", err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	if _, err := tx.Exec(ctx, fmt.Sprintf("SET TRANSACTION SNAPSHOT '%s'", snapshot)); err != nil {
		return res, fmt.Errorf("import slot snapshot: %w", err)
	}
	if res.Published, err = r.republish(ctx, tx, pos, since); err != nil {
		return res, err
	}
	if err := recordSlot(ctx, r.pool, r.cfg.Slot, pos, &since, res.Published); err != nil {
		return res, err
	}
	r.log.Info("resync done", slog.Int64("published", res.Published), slog.String("lsn", pos.String()))
	return res, nil
}

// republish sends the rows since `since` visible to tx and waits until Kafka
// acknowledged (or the relay parked) each of them.
func (r *Relay) republish(ctx context.Context, tx pgx.Tx, pos pglogrepl.LSN, since time.Time) (int64, error) {
	producer, err := r.producer()
	if err != nil {
		return 0, err
	}
	defer producer.Close()
	pubCtx, stop := context.WithCancel(ctx)
	defer stop()
	wm := newWatermark(0)
	pub := newPublisher(pubCtx, producer, wm, newParker(r.pool, r.log, r.metrics), r.metrics, r.traces(), r.topicPolicy())
	all := wm.begin(time.Time{}) // no commit time: these rows are not read off the slot

	rows, err := tx.Query(ctx, resyncRowsSQL, since.Add(-ResyncMargin))
	if err != nil {
		return 0, fmt.Errorf("read outbox: %w", err)
	}
	defer rows.Close()
	var n int64
	for rows.Next() {
		var row outboxRow
		var inbox *string
		if err := rows.Scan(&row.id, &row.topic, &row.key, &row.headers, &row.payload, &inbox); err != nil {
			return n, fmt.Errorf("read outbox row: %w", err)
		}
		row.hasPayload = row.payload != nil
		if inbox != nil {
			row.inboxID, row.hasInbox = *inbox, true
		}
		if rec, err := row.record(); err != nil {
			pub.unreadable(all, pos, err)
		} else {
			pub.publish(all, rec, pos)
		}
		n++
		if err := r.awaitBelow(ctx, pub, r.cfg.MaxInFlight); err != nil {
			return n, err
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("read outbox: %w", err)
	}
	wm.commit(all, pos)
	if err := r.awaitBelow(ctx, pub, 1); err != nil {
		return n, err
	}
	return n, nil
}

// awaitBelow waits until fewer than limit records are unacknowledged.
func (r *Relay) awaitBelow(ctx context.Context, pub *publisher, limit int) error {
	err := pub.awaitRoom(ctx, limit, r.cfg.MaxInFlightBytes, time.Second, nil)
	if err != nil && ctx.Err() == nil {
		return errors.Join(errors.New("resync: a record was not acknowledged; run it again"), err)
	}
	return err
}
