package effect

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
)

// Runtime returns g's handler as Sluice's consumer runtime runs it, its
// intents published under the deployment's topic prefix. It is for
// Sluice's command line, which runs a binary's groups; it is not part of
// this package's promise and changes with the runtime.
func (g Group) Runtime(topicPrefix string) any {
	return &runtimeHandler{g: g, topics: envelope.Topics{Prefix: topicPrefix}}
}

// runtimeHandler is a Group as the runtime's consumers.Handler: it hands
// the handler the records of the group's types only, as Records, and
// writes what the batch emitted and added once it settled.
type runtimeHandler struct {
	g      Group
	topics envelope.Topics
	params sync.Pool // *pg.Params of the intents' statement, kept between batches
}

func (h *runtimeHandler) Prepare(ctx context.Context, rec *consumers.Record) error {
	if !h.g.Takes(rec.Event.Type) {
		return nil
	}
	r := recordOf(rec)
	err := h.g.Handler.Prepare(ctx, &r)
	rec.Prepared = r.Prepared
	return err
}

func (h *runtimeHandler) Begin(tx pgx.Tx) consumers.Batch {
	p, _ := h.params.Get().(*pg.Params)
	if p == nil {
		p = &pg.Params{}
	}
	t := &Tx{Tx: tx, topics: h.topics, params: p}
	return &runtimeBatch{h: h, tx: t, b: h.g.Handler.Begin(t)}
}

type runtimeBatch struct {
	h  *runtimeHandler
	tx *Tx
	b  Batch
}

// Apply hands the handler the records of the group's types, in order; a
// failure naming records is renumbered to the runtime's indices.
func (b *runtimeBatch) Apply(ctx context.Context, recs []consumers.Record) error {
	// Each call its own slice: a handler may keep its records until it
	// settles (a counter's records wait together if its row is locked).
	mine, at := make([]Record, 0, len(recs)), make([]int, 0, len(recs))
	for i := range recs {
		if b.h.g.Takes(recs[i].Event.Type) {
			mine, at = append(mine, recordOf(&recs[i])), append(at, i)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	if err := b.b.Apply(ctx, mine); err != nil {
		return consumers.Renumber(err, at)
	}
	return nil
}

// Settle settles the handler, then writes its intents and counters; the
// intents' buffer goes back for the next batch once they were sent.
func (b *runtimeBatch) Settle(ctx context.Context) error {
	if err := b.b.Settle(ctx); err != nil {
		return err
	}
	if err := b.tx.settle(ctx); err != nil {
		return err
	}
	b.tx.params.Trim(4 << 20)
	b.h.params.Put(b.tx.params)
	return nil
}
