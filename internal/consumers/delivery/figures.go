package delivery

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Each endpoint's attempts per minute (delivery_minutes), for its health
// over a day (endpoints.Store.Health): added up in memory as attempts end
// and written with the batched 2xx outcomes, an endpoint's minute at most
// every figuresEvery and once more when the minute is over. So the rollup
// costs a row written per endpoint every few seconds whatever its volume;
// a process that dies loses at most that much of its figures.

// figuresEvery is how often an endpoint's running minute is written.
const figuresEvery = 5 * time.Second

// latencyColumns are delivery_minutes' bucket columns, one per bound of
// endpoints.LatencyBoundsMS ("le_50": at most 50 ms) and le_inf.
var latencyColumns = func() []string {
	cols := make([]string, 0, len(endpoints.LatencyBoundsMS)+1)
	for _, b := range endpoints.LatencyBoundsMS {
		cols = append(cols, fmt.Sprintf("le_%.0f", b))
	}
	return append(cols, "le_inf")
}()

// minute is one endpoint's attempts in one minute.
type minute struct {
	attempts, delivered, failed, answered int
	latencySum                            int64
	buckets                               []int
}

type minuteKey struct {
	endpoint string
	at       time.Time // the minute's start
}

// figures adds attempts up until they are written.
type figures struct {
	mu      sync.Mutex
	minutes map[minuteKey]*minute
	written map[string]time.Time // per endpoint, when its running minute was last taken
}

func newFigures() *figures {
	return &figures{minutes: map[minuteKey]*minute{}, written: map[string]time.Time{}}
}

// add counts attempt a to endpoint.
func (f *figures) add(endpoint string, a endpoints.Attempt) {
	k := minuteKey{endpoint: endpoint, at: a.At.UTC().Truncate(time.Minute)}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.minutes[k]
	if m == nil {
		m = &minute{buckets: make([]int, len(latencyColumns))}
		f.minutes[k] = m
	}
	m.attempts++
	if a.OK() {
		m.delivered++
	} else {
		m.failed++
	}
	if a.Status == 0 && !a.OK() {
		return // no answer: no latency (a confirm is an answer)
	}
	m.answered++
	m.latencySum += int64(a.LatencyMS)
	b, _ := slices.BinarySearch(endpoints.LatencyBoundsMS, float64(a.LatencyMS))
	m.buckets[b]++
}

// taken is figures taken to be written.
type taken map[minuteKey]*minute

// take removes what is to be written at now: minutes over, and running
// minutes of endpoints not written for figuresEvery; all of them when all.
func (f *figures) take(now time.Time, all bool) taken {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := taken{}
	current := now.UTC().Truncate(time.Minute)
	for k, m := range f.minutes {
		if !all && k.at.Equal(current) && now.Sub(f.written[k.endpoint]) < figuresEvery {
			continue
		}
		out[k] = m
		delete(f.minutes, k)
		f.written[k.endpoint] = now
	}
	return out
}

// putBack adds figures whose write failed to the next write's.
func (f *figures) putBack(t taken) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, m := range t {
		into := f.minutes[k]
		if into == nil {
			f.minutes[k] = m
			continue
		}
		into.attempts += m.attempts
		into.delivered += m.delivered
		into.failed += m.failed
		into.answered += m.answered
		into.latencySum += m.latencySum
		for i := range into.buckets {
			into.buckets[i] += m.buckets[i]
		}
	}
}

// json is t as delivered.sql reads it: rows named by delivery_minutes'
// columns; nil when empty.
func (t taken) json() []byte {
	if len(t) == 0 {
		return nil
	}
	rows := make([]map[string]any, 0, len(t))
	for k, m := range t {
		row := map[string]any{"endpoint_id": k.endpoint, "minute": k.at, "attempts": m.attempts, "delivered": m.delivered,
			"failed": m.failed, "answered": m.answered, "latency_ms_sum": m.latencySum}
		for i, col := range latencyColumns {
			row[col] = m.buckets[i]
		}
		rows = append(rows, row)
	}
	out, _ := json.Marshal(rows) // strings, numbers and times: no error
	return out
}
