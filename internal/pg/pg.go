// Package pg opens Sluice's Postgres connections and applies its schema.
//
// Postgres holds the truth: the inbox, the outbox and every effect commit
// there. This package only knows how to reach it; what is written lives with
// the stage that writes it.
package pg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Connect opens a pool and checks that the database answers.
func Connect(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return connect(ctx, url, maxConns, nil)
}

// ConnectDeliverer is Connect for the deliverer, with two settings its
// work allows and needs. Its commits may be lost in a crash of Postgres
// without harm, because each only saves work that would otherwise be done
// again (a lost outcome sends the same webhook-id again): they do not wait
// for the WAL to reach the disk (synchronous_commit off). Never for what a
// 2xx or an offset commit stands on. And every statement is planned with
// the tables as they are (plan_cache_mode force_custom_plan): its queue
// tables start empty and fill within seconds, long before autovacuum first
// analyzes them, and a generic plan made while they were empty scans them
// whole at every call.
func ConnectDeliverer(ctx context.Context, url string, maxConns int32) (*pgxpool.Pool, error) {
	return connect(ctx, url, maxConns, map[string]string{"synchronous_commit": "off", "plan_cache_mode": "force_custom_plan"})
}

func connect(ctx context.Context, url string, maxConns int32, params map[string]string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if maxConns > 0 {
		cfg.MaxConns = maxConns
	}
	for k, v := range params {
		cfg.ConnConfig.RuntimeParams[k] = v
	}
	cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		registerUUIDStrings(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("reach database: %w", err)
	}
	return pool, nil
}
