package consumers

import (
	"bytes"
	"testing"

	"github.com/sluicehq/sluice/internal/pg"
)

// A batch's intents are encoded into room made once for the statement: from
// a batch's fresh parameters, each of the four arrays grew the buffer (and
// copied the ones before it) in turn. Not parallel: it counts allocations.
func TestEncodeIntentsGrowsTheBufferOnce(t *testing.T) {
	intents := make([]Intent, 2000)
	for i := range intents {
		intents[i] = Intent{Topic: "sluice.notifications", Key: bytes.Repeat([]byte{'k'}, 80),
			Headers: bytes.Repeat([]byte{'h'}, 500), Payload: bytes.Repeat([]byte{'p'}, 200)}
	}
	allocs := testing.AllocsPerRun(10, func() {
		var p pg.Params
		encodeIntents(&p, intents) // the four slices, the buffer once, the ends thrice (1, 2, 4)
	})
	if allocs > 8 {
		t.Errorf("encoding 2,000 intents took %.0f allocations, want at most 8", allocs)
	}
}
