// Package pg opens Sluice's Postgres connections and applies its schema.
//
// Postgres holds the truth: the inbox, the outbox and every effect commit
// there. This package only knows how to reach it; what is written lives with
// the stage that writes it.
package pg

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connect opens a pool and checks that the database answers.
//
// Every pool's statements are short (a batch, a request, a page: rows
// read by index and bounded), and on tables of millions of rows Postgres
// prices some of them above jit_above_cost or parallel_setup_cost for
// rows they never read: an endpoint's figures at a million deliveries
// compiled 141 functions (200 ms) and launched two workers (260 ms on a
// busy machine) to count a hundred rows. No pool compiles (jit off) or
// starts parallel workers (max_parallel_workers_per_gather 0); the
// pools below add their own settings to these.
func Connect(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return connect(ctx, url, maxConns, nil)
}

// everyPool is the settings of every pool (Connect says why).
func everyPool() map[string]string {
	return map[string]string{"jit": "off", "max_parallel_workers_per_gather": "0"}
}

// ConnectDeliverer is Connect for the deliverer, with the settings its
// work allows and needs. Its commits may be lost in a crash of Postgres
// without harm, because each only saves work that would otherwise be done
// again (a lost outcome sends the same webhook-id again): they do not wait
// for the WAL to reach the disk (synchronous_commit off). Never for what a
// 2xx or an offset commit stands on.
//
// Its statements run for every few deliveries (a read per announcement, a
// body load per send, an outcome batch), and planning them anew at each
// call cost Postgres more than running them (the body load plans a join
// over every partition of inbox_payloads): each is planned once per
// connection and that plan kept (plan_cache_mode force_generic_plan). A
// plan kept is made with the statistics of its first call, and the
// deliveries table starts empty, where any plan looks cheap: its
// connections plan no sequential scan where an index serves
// (enable_seqscan off) and no sort where an index gives the order
// (enable_sort off: an endpoint's deliveries in id order are read from
// deliveries_endpoint, never from another index of the endpoint's rows
// then sorted), so the plans are the same whatever the statistics say
// (TestNoDelivererPlanScansWhatGrowsInAnyStatisticsState holds them).
// Without JIT (every pool's): what those settings penalise but cannot
// avoid (a one-row table's scan, a sort of a few rows) would price a
// statement high enough to compile it at each call.
func ConnectDeliverer(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return connect(ctx, url, maxConns, map[string]string{"synchronous_commit": "off", "plan_cache_mode": "force_generic_plan",
		"enable_seqscan": "off", "enable_sort": "off"})
}

// ConnectCommitter is Connect for ingest's group commits: each statement
// is planned once per connection and that plan kept (plan_cache_mode
// force_generic_plan). Under Postgres's default, a prepared statement whose
// custom plans look cheaper than its generic plan is planned anew at every
// call, and ingest's accepting statement looks so for the batches of one or
// two deliveries that moderate rates make: planning it costs Postgres more
// than running it.
//
// A plan kept for the connection's life is made with the statistics of its
// first call, and on a new deployment those say the inbox is empty: a scan
// looks cheapest, and is then kept while the inbox grows (one scan per
// delivery, each longer). Every committer statement reads by key, so its
// connections plan no sequential scan where an index serves
// (enable_seqscan off): the plan is the same whatever the statistics say.
// The pool is the committers' alone, so no other statement is planned so.
func ConnectCommitter(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return connect(ctx, url, maxConns, map[string]string{"plan_cache_mode": "force_generic_plan", "enable_seqscan": "off"})
}

func connect(ctx context.Context, url string, maxConns int32, params map[string]string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	settings := everyPool()
	maps.Copy(settings, params)
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		registerUUIDStrings(conn.TypeMap())
		return set(ctx, conn, settings)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("reach database%s: %w", tlsHint(err, cfg.ConnConfig.Config), err)
	}
	return pool, nil
}

// set applies settings to a new connection with a statement, not as
// startup parameters: PgBouncer refuses a connection whose startup packet
// has a parameter it does not track ("unsupported startup parameter"),
// while a statement passes any pooler in session mode.
func set(ctx context.Context, conn *pgx.Conn, settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	var calls []string
	var args []any
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		calls = append(calls, fmt.Sprintf("set_config($%d, $%d, false)", len(args)+1, len(args)+2))
		args = append(args, k, settings[k])
	}
	if _, err := conn.Exec(ctx, "SELECT "+strings.Join(calls, ", "), args...); err != nil {
		return fmt.Errorf("set %s: %w", strings.Join(slices.Sorted(maps.Keys(settings)), ", "), err)
	}
	return nil
}

// tlsHint names which part of TLS failed, in front of the driver's own
// words: a wrong CA and an expired certificate are fixed by different
// people.
func tlsHint(err error, cfg pgconn.Config) string {
	var (
		unknown  x509.UnknownAuthorityError
		invalid  x509.CertificateInvalidError
		hostname x509.HostnameError
	)
	if cfg.TLSConfig == nil {
		return ""
	}
	switch {
	case errors.As(err, &unknown):
		return " (TLS: the server's certificate is not signed by the CA of sslrootcert; check sslrootcert names the CA that issued it)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return fmt.Sprintf(" (TLS: the server's certificate is expired or not yet valid: it ended %s; the server needs a new one)", invalid.Cert.NotAfter.UTC().Format(time.RFC3339))
	case errors.As(err, &hostname):
		return fmt.Sprintf(" (TLS: the server's certificate does not name host %s, which sslmode=verify-full requires)", cmp.Or(cfg.TLSConfig.ServerName, cfg.Host))
	}
	return ""
}
