package operate

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/store/inbox"
)

// minuteSettle is how long after a minute ends its counts are taken as
// final: received_at is the accepting transaction's start, and ingest's
// transactions last milliseconds, so a row of a minute two minutes gone is
// committed. A status that changes later (a held event released, one
// waiting for its object published) is counted as it was then.
const minuteSettle = 2 * time.Minute

// minuteKey is one tenant's events of one status in a minute.
type minuteKey struct {
	minute time.Time
	tenant string
	status inbox.Status
}

// minutes samples the overview's per-minute counts: the settled minutes of
// the window are kept in the process and only the minutes since are read
// again, so an overview reads a few minutes of the inbox, not the hour
// (at 1,000,000 rows the hour was 50,000 of them, read through a lossy
// BRIN index: 298 ms a page).
type minutes struct {
	mu      sync.Mutex
	settled map[minuteKey]int64 // minutes before until, every tenant
	until   time.Time           // the first minute not settled; zero: none read
}

// read returns the counts of every minute since since, settling those
// before now-minuteSettle.
func (m *minutes) read(ctx context.Context, tx pgx.Tx, since, now time.Time) (map[minuteKey]int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	from := m.until
	if from.IsZero() || from.Before(since) || from.After(now) {
		// The first read, or one after a gap longer than the window
		// (or a clock gone back): nothing kept is of use.
		m.settled, from = map[minuteKey]int64{}, since
	}
	maps.DeleteFunc(m.settled, func(k minuteKey, _ int64) bool { return k.minute.Before(since) })
	fresh, err := readMinutes(ctx, tx, from)
	if err != nil {
		return nil, err
	}
	settle := now.Add(-minuteSettle).Truncate(time.Minute)
	all := maps.Clone(m.settled)
	for k, n := range fresh {
		all[k] = n
		if k.minute.Before(settle) {
			m.settled[k] = n
		}
	}
	m.until = from
	if settle.After(from) {
		m.until = settle
	}
	return all, nil
}

func readMinutes(ctx context.Context, tx pgx.Tx, from time.Time) (map[minuteKey]int64, error) {
	// Estimated per tenant, a scan by tenant looks no cheaper than the
	// lossy bitmap; its cost estimate is also high enough to start JIT
	// compilation (100 ms for a 1 ms read), which the caller turned off.
	// The read is the transaction's last: the setting lasts until its end.
	if _, err := tx.Exec(ctx, "SET LOCAL enable_bitmapscan = off"); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, overviewMinutesSQL, from)
	if err != nil {
		return nil, err
	}
	out := map[minuteKey]int64{}
	var k minuteKey
	var n int64
	_, err = pgx.ForEachRow(rows, []any{&k.minute, &k.tenant, &k.status, &n}, func() error {
		k.minute = k.minute.UTC()
		out[k] = n
		return nil
	})
	return out, err
}

// minuteCounts folds counts into the overview's minutes, oldest first, of
// tenant only when tenant is not nil.
func minuteCounts(counts map[minuteKey]int64, tenant *string) ([]MinuteCounts, int64) {
	byMinute := map[time.Time]map[inbox.Status]int64{}
	var total int64
	for k, n := range counts {
		if tenant != nil && k.tenant != *tenant {
			continue
		}
		if byMinute[k.minute] == nil {
			byMinute[k.minute] = map[inbox.Status]int64{}
		}
		byMinute[k.minute][k.status] += n
		total += n
	}
	out := []MinuteCounts{}
	for _, m := range slices.SortedFunc(maps.Keys(byMinute), time.Time.Compare) {
		out = append(out, MinuteCounts{Minute: m, ByStatus: byMinute[m]})
	}
	return out, total
}
