package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// horizon names which horizon a table lives by.
type horizon int

const (
	payloadHorizon horizon = iota
	keyHorizon
	linksHorizon
)

// table is a time-partitioned table and its horizon; ingest marks the
// tables ingest writes (a delivery fails without their partition of now).
type table struct {
	name    string
	horizon horizon
	ingest  bool
}

// Tables are the partitioned tables, as migrations 00009 (by received_at)
// and 00016 (by sent_at) made them.
var tables = []table{
	{"inbox_payloads", payloadHorizon, true},
	{"inbox_conflicts", payloadHorizon, true}, // each holds a body
	{"inbox_duplicates", keyHorizon, true},    // delivery records of kept keys
	// The dispatcher's acknowledged sends: the dedup of its calls, kept as
	// long as keys.
	{"dispatch_deliveries", keyHorizon, false},
}

// nameLayout is how a partition's bounds appear in its name (UTC):
// <table>_p<from>_<to>, the form migration 00009 uses too.
const nameLayout = "20060102t150405"

// partition is one partition of a table, its range [from, to).
type partition struct {
	name     string
	from, to time.Time
	pending  bool // half detached
	bytes    int64
	rows     int64
}

func partitionName(t string, from, to time.Time) string {
	return fmt.Sprintf("%s_p%s_%s", t, from.UTC().Format(nameLayout), to.UTC().Format(nameLayout))
}

// parseBounds reads a partition's range from its name; ok is false for a
// partition someone else named (left alone).
func parseBounds(t, name string) (from, to time.Time, ok bool) {
	rest, found := strings.CutPrefix(name, t+"_p")
	if !found {
		return from, to, false
	}
	f, s, found := strings.Cut(rest, "_")
	if !found {
		return from, to, false
	}
	from, err1 := time.Parse(nameLayout, f)
	to, err2 := time.Parse(nameLayout, s)
	return from, to, err1 == nil && err2 == nil && from.Before(to)
}

// querier is a pool or one of its connections.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func listPartitions(ctx context.Context, conn querier, t string) ([]partition, error) {
	rows, err := conn.Query(ctx, partitionsSQL, t)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", t, err)
	}
	var out []partition
	for rows.Next() {
		var p partition
		if err := rows.Scan(&p.name, &p.pending, &p.bytes, &p.rows); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list partitions of %s: %w", t, err)
		}
		var ok bool
		if p.from, p.to, ok = parseBounds(t, p.name); ok {
			out = append(out, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", t, err)
	}
	slices.SortFunc(out, func(a, b partition) int { return a.from.Compare(b.from) })
	return out, nil
}

// missing is what of [from, to) the partitions (sorted) do not cover.
func missing(from, to time.Time, have []partition) [][2]time.Time {
	var gaps [][2]time.Time
	at := from
	for _, p := range have {
		if !p.to.After(at) || !p.from.Before(to) {
			continue
		}
		if p.from.After(at) {
			gaps = append(gaps, [2]time.Time{at, p.from})
		}
		if p.to.After(at) {
			at = p.to
		}
	}
	if at.Before(to) {
		gaps = append(gaps, [2]time.Time{at, to})
	}
	return gaps
}

// ensure creates what is missing of the partitions from the current
// interval to Ahead intervals beyond. A new partition is created empty and
// attached (SHARE UPDATE EXCLUSIVE on the parent: inserts go on), where
// CREATE TABLE ... PARTITION OF would lock the parent against them.
func (m *Manager) ensure(ctx context.Context, conn *pgxpool.Conn, t table, have []partition, now time.Time) (int, error) {
	start := now.Truncate(m.cfg.Interval)
	created := 0
	for k := 0; k <= m.cfg.Ahead; k++ {
		from := start.Add(time.Duration(k) * m.cfg.Interval)
		for _, gap := range missing(from, from.Add(m.cfg.Interval), have) {
			name := partitionName(t.name, gap[0], gap[1])
			err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				ident, parent := pgx.Identifier{name}.Sanitize(), pgx.Identifier{t.name}.Sanitize()
				if _, err := tx.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`, ident, parent)); err != nil {
					return err
				}
				_, err := tx.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM ('%s') TO ('%s')`,
					parent, ident, gap[0].UTC().Format(time.RFC3339Nano), gap[1].UTC().Format(time.RFC3339Nano)))
				return err
			})
			if err != nil {
				return created, fmt.Errorf("create partition %s: %w", name, err)
			}
			created++
			have = append(have, partition{name: name, from: gap[0], to: gap[1]})
			slices.SortFunc(have, func(a, b partition) int { return a.from.Compare(b.from) })
			m.metrics.created.WithLabelValues(t.name).Inc()
			m.log.Info("partition created", slog.String("table", t.name), slog.String("partition", name),
				slog.Time("from", gap[0]), slog.Time("to", gap[1]))
		}
	}
	return created, nil
}

// dropAged drops each partition whose upper bound is past cutoff: every
// row in it is older than the horizon. It is detached CONCURRENTLY first
// (SHARE UPDATE EXCLUSIVE on the parent), because dropping an attached
// partition takes ACCESS EXCLUSIVE on the parent and ingest would queue
// behind it; a detach that was interrupted is finalized.
func (m *Manager) dropAged(ctx context.Context, conn *pgxpool.Conn, t table, have []partition, cutoff time.Time) (int, error) {
	dropped := 0
	for _, p := range have {
		if p.to.After(cutoff) {
			continue
		}
		ident, parent := pgx.Identifier{p.name}.Sanitize(), pgx.Identifier{t.name}.Sanitize()
		detach := fmt.Sprintf(`ALTER TABLE %s DETACH PARTITION %s CONCURRENTLY`, parent, ident)
		if p.pending {
			detach = fmt.Sprintf(`ALTER TABLE %s DETACH PARTITION %s FINALIZE`, parent, ident)
		}
		if _, err := conn.Exec(ctx, detach); err != nil {
			return dropped, fmt.Errorf("detach partition %s: %w", p.name, err)
		}
		if _, err := conn.Exec(ctx, `DROP TABLE `+ident); err != nil {
			return dropped, fmt.Errorf("drop partition %s: %w", p.name, err)
		}
		dropped++
		m.metrics.dropped.WithLabelValues(t.name).Inc()
		m.metrics.droppedB.WithLabelValues(t.name).Add(float64(p.bytes))
		m.metrics.droppedR.WithLabelValues(t.name).Add(float64(p.rows))
		m.log.Info("partition dropped", slog.String("table", t.name), slog.String("partition", p.name),
			slog.Time("from", p.from), slog.Time("to", p.to), slog.Int64("bytes", p.bytes), slog.Int64("rows_estimate", p.rows))
	}
	return dropped, nil
}
