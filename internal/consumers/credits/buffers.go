package credits

import (
	"sync"

	"github.com/sluicehq/sluice/internal/pg"
)

// Buffers keeps the statements' parameter buffers from one batch to the
// next: a backlog's batch of thousands of records encodes megabytes of
// parameters, and, made anew for every batch, they were a tenth of what
// the consumers allocated there. Batches of a group take and give back a
// pair each; what a batch that failed held is left to the collector.
type Buffers struct {
	pool sync.Pool
}

// NewBuffers is an empty keep.
func NewBuffers() *Buffers { return &Buffers{} }

// buffersKept: a pair that grew past this (a batch of large bodies) is not
// kept, so the memory a group holds between batches stays its budget's.
const buffersKept = 8 << 20

func (b *Buffers) get() *[2]pg.Params {
	if b != nil {
		if p, ok := b.pool.Get().(*[2]pg.Params); ok {
			return p
		}
	}
	return &[2]pg.Params{}
}

func (b *Buffers) put(p *[2]pg.Params) {
	if b == nil {
		return
	}
	p[0].Trim(buffersKept)
	p[1].Trim(buffersKept)
	b.pool.Put(p)
}
