package endpoints

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/health.sql
var healthSQL string

// LatencyBoundsMS are the upper bounds of the latency buckets the
// deliverer counts each endpoint's answered attempts in, per minute
// (delivery_minutes); a last bucket takes what is above the last bound.
var LatencyBoundsMS = []float64{50, 100, 250, 500, 1000, 2500, 5000, 10000}

// Health is an endpoint's attempts over a window (the console's endpoint
// health), read from the deliverer's figures per minute: a day is 1,440
// rows whatever the endpoint's volume. The figures of the last few
// seconds may not be written yet.
type Health struct {
	Since     time.Time `json:"since"`
	Attempts  int64     `json:"attempts" doc:"Requests to the endpoint since since."`
	Delivered int64     `json:"delivered" doc:"Of them, answered 2xx."`
	Failed    int64     `json:"failed"`
	// SuccessRate is Delivered / Attempts; absent without attempts.
	SuccessRate *float64 `json:"success_rate,omitempty" doc:"Delivered / attempts; absent without attempts."`
	// LatencyP50MS and LatencyP99MS are estimated from the buckets
	// (linear within one) over the attempts that got an answer; absent
	// without any.
	LatencyP50MS *float64 `json:"latency_p50_ms,omitempty" doc:"Median latency of the answered attempts, estimated from buckets."`
	LatencyP99MS *float64 `json:"latency_p99_ms,omitempty" doc:"99th percentile latency of the answered attempts, estimated from buckets."`
	// Hours are the attempts of each hour that had any, oldest first.
	Hours []HourFigures `json:"hours"`
}

// HourFigures are an endpoint's attempts in one hour.
type HourFigures struct {
	Hour      time.Time `json:"hour"`
	Attempts  int64     `json:"attempts"`
	Delivered int64     `json:"delivered"`
	Failed    int64     `json:"failed"`
}

// Health reads endpoint id's attempts since since (the console asks for
// the last 24 hours).
func (s Store) Health(ctx context.Context, id string, since time.Time) (Health, error) {
	if _, err := s.TenantOf(ctx, id); err != nil {
		return Health{}, err
	}
	rows, err := s.Pool.Query(ctx, healthSQL, id, since)
	if err != nil {
		return Health{}, fmt.Errorf("read endpoint health: %w", err)
	}
	h := Health{Since: since, Hours: []HourFigures{}}
	var (
		answered int64
		buckets  = make([]int64, len(LatencyBoundsMS)+1)
		hour     HourFigures
		got      = make([]int64, len(LatencyBoundsMS)+1)
		a, sum   int64
	)
	scan := []any{&hour.Hour, &hour.Attempts, &hour.Delivered, &hour.Failed, &a, &sum}
	for i := range got {
		scan = append(scan, &got[i])
	}
	if _, err := pgx.ForEachRow(rows, scan, func() error {
		h.Hours = append(h.Hours, hour)
		h.Attempts, h.Delivered, h.Failed, answered = h.Attempts+hour.Attempts, h.Delivered+hour.Delivered, h.Failed+hour.Failed, answered+a
		for i, n := range got {
			buckets[i] += n
		}
		return nil
	}); err != nil {
		return Health{}, fmt.Errorf("read endpoint health: %w", err)
	}
	if h.Attempts > 0 {
		rate := float64(h.Delivered) / float64(h.Attempts)
		h.SuccessRate = &rate
	}
	if answered > 0 {
		p50, p99 := quantile(buckets, answered, 0.5), quantile(buckets, answered, 0.99)
		h.LatencyP50MS, h.LatencyP99MS = &p50, &p99
	}
	return h, nil
}

// quantile estimates the q-quantile of n latencies counted in buckets
// (LatencyBoundsMS), linearly within the bucket it falls in; in the last,
// unbounded one it is the last bound.
func quantile(buckets []int64, n int64, q float64) float64 {
	rank := q * float64(n)
	var seen float64
	lower := 0.0
	for i, c := range buckets {
		if i == len(LatencyBoundsMS) {
			return LatencyBoundsMS[len(LatencyBoundsMS)-1]
		}
		upper := LatencyBoundsMS[i]
		if c > 0 && seen+float64(c) >= rank {
			return lower + (upper-lower)*(rank-seen)/float64(c)
		}
		seen += float64(c)
		lower = upper
	}
	return lower
}
