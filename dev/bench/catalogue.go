package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// catalogueSize is BENCH_CATALOGUE: how many tenants' own event types to
// declare before the steps run (0, the default: none).
func catalogueSize() (int, error) {
	v := os.Getenv("BENCH_CATALOGUE")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("BENCH_CATALOGUE=%q: want a number of event types", v)
	}
	return n, nil
}

// declareCatalogue declares n event types spread over the bench's tenants
// (for their Stripe sources, under names no built-in type has), each with a
// schema of the size tenants write, so "ingest with n types" is measured
// against the same build without them: alternate BENCH_CATALOGUE=n and
// unset runs in one sitting and compare medians.
func (b *bench) declareCatalogue(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	// BENCH_CATALOGUE_TRAFFIC=1: the generator sends events of these types
	// (each source its tenant's), so ingest looks each one up in a catalogue
	// of n and validates it with a runtime schema.
	traffic := os.Getenv("BENCH_CATALOGUE_TRAFFIC") == "1"
	perTenant := (n + len(b.sources) - 1) / len(b.sources)
	store, err := catalog.New(b.pool, catalog.Config{MaxTypesPerTenant: perTenant, Topics: envelope.Topics{Prefix: b.prefix}, Providers: kinds.Builtin()})
	if err != nil {
		return err
	}
	began := time.Now()
	for i := range n {
		s := &b.sources[i%len(b.sources)]
		_, err := store.Create(ctx, catalog.Spec{TenantID: s.tenantID, Kind: "stripe", Type: fmt.Sprintf("bench.type_%d", i),
			ResourceType: "event", ObjectID: "/data/object/id", Schema: fmt.Appendf(nil, `{"type":"object","required":["id","type","data"],
			"properties":{"id":{"type":"string"},"type":{"const":"bench.type_%d"},"created":{"type":"integer"},
			"data":{"type":"object","required":["object"],"properties":{"object":{"type":"object","required":["id"],
			"properties":{"id":{"type":"string","maxLength":255},"amount":{"type":"integer","minimum":0}}}}}}}`, i)})
		if err != nil {
			return fmt.Errorf("declare event type %d: %w", i, err)
		}
		if traffic {
			s.types = append(s.types, fmt.Sprintf("bench.type_%d", i))
		}
	}
	b.results["catalogue_types"] = float64(n)
	log.Printf("declared %d tenants' event types in %s", n, time.Since(began).Round(time.Millisecond))
	return nil
}
