package effect

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
)

// Tx is one transaction attempt of a batch: the pgx transaction every
// effect of the batch is written in (its methods are Tx's), and what the
// batch writes once its handler settled: the intents it emitted and its
// counters' net changes, with one round trip.
type Tx struct {
	pgx.Tx

	topics   envelope.Topics
	intents  []consumers.Intent
	counters []*counterBatch // in the order first added to
	params   *pg.Params      // the intents' statement's parameters
}

// Emit writes in, an intent caused by rec's effect, as an outbox row of
// this transaction when the batch settles, after the intents emitted
// before it. ctx is the effect's (Record.Trace): the intent continues its
// trace. Emit an intent only once its effect is known to be new (Once
// said so), so a replay emits nothing twice.
func (tx *Tx) Emit(ctx context.Context, rec Record, in Intent) {
	tx.intents = append(tx.intents, tx.intent(ctx, rec, in))
}

// Add adds delta to the row of c under key, for rec: the batch's changes
// are netted per key and written when it settles, in key order (see
// Counter).
func (tx *Tx) Add(c *Counter, rec Record, key string, delta int64) {
	for _, b := range tx.counters {
		if b.c == c {
			b.add(rec, key, delta)
			return
		}
	}
	b := &counterBatch{c: c, deltas: map[row]*counterDelta{}}
	b.add(rec, key, delta)
	tx.counters = append(tx.counters, b)
}

// settle writes what the batch emitted and added, in one round trip:
// intents first, in order, then each counter's net changes in key order.
// A counter row suspected of being locked elsewhere is asked about first;
// one still locked fails the batch naming its records (Blocked).
func (tx *Tx) settle(ctx context.Context) error {
	if len(tx.intents) == 0 && len(tx.counters) == 0 {
		return nil
	}
	var q pgconn.Batch
	if err := consumers.QueueIntents(ctx, tx.Tx, &q, tx.params, tx.intents); err != nil {
		return err
	}
	for _, b := range tx.counters {
		if err := b.blocked(ctx, tx.Tx); err != nil {
			return err
		}
		if err := b.queue(ctx, tx.Tx, &q); err != nil {
			return err
		}
	}
	if err := tx.Conn().PgConn().ExecBatch(ctx, &q).Close(); err != nil {
		if consumers.WaitedForLock(err) {
			for _, b := range tx.counters {
				b.c.suspect(b.keys) // the next attempt asks which
			}
		}
		return fmt.Errorf("write intents and counters: %w", err)
	}
	return nil
}
