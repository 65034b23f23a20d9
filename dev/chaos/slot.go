package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// faultSlot loses the relay's slot the way production does: relays down,
// WAL past max_slot_wal_keep_size, the slot invalidated at a checkpoint.
// Recovery is the documented one: `sluice cdc resync --since T` with T the
// last confirmed time cdc_slots keeps, then the relays start again.
const faultSlot = "slot_invalidated_resync"

func (c *chaos) invalidateSlot(ctx context.Context, afterKill func()) error {
	// The recovery needs a confirmed time, which the relay records on its
	// first progress tick: drawn as the first fault, this one came before
	// it, failed, and left every relay dead for the rest of the run.
	var since *time.Time
	if err := poll(ctx, time.Minute, "the relay to record a confirmed time", func() (bool, error) {
		err := c.pool.QueryRow(ctx, `SELECT confirmed_time FROM cdc_slots WHERE slot = 'chaos'`).Scan(&since)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return since != nil, err
	}); err != nil {
		return fmt.Errorf("cdc_slots: %w", err)
	}
	for _, r := range c.relays {
		c.fleet.kill(r)
	}
	afterKill()
	// What the relays confirmed up to their kill: the later, the less the
	// resync publishes again.
	if err := c.pool.QueryRow(ctx, `SELECT confirmed_time FROM cdc_slots WHERE slot = 'chaos'`).Scan(&since); err != nil {
		return fmt.Errorf("cdc_slots: %w", err)
	}
	if err := c.loseSlot(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.report.Kills["slot"]++
	c.mu.Unlock()
	if err := c.resync(ctx, *since); err != nil {
		return err
	}
	if err := c.fleet.restart(ctx, c.relays[0], "/readyz"); err != nil {
		return err
	}
	for _, r := range c.relays[1:] {
		if err := c.fleet.restart(ctx, r, "/healthz"); err != nil {
			return err
		}
	}
	return nil
}

// loseSlot shrinks max_slot_wal_keep_size, writes WAL until a checkpoint
// invalidates the slot (wal_status lost), and restores the setting.
func (c *chaos) loseSlot(ctx context.Context) (err error) {
	if _, err := c.pool.Exec(ctx, `ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'`); err != nil {
		return fmt.Errorf("shrink max_slot_wal_keep_size: %w", err)
	}
	defer func() {
		_, rerr := c.pool.Exec(context.WithoutCancel(ctx), `ALTER SYSTEM RESET max_slot_wal_keep_size`)
		_, lerr := c.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_reload_conf()`)
		if err == nil && (rerr != nil || lerr != nil) {
			err = fmt.Errorf("restore max_slot_wal_keep_size: %v %v", rerr, lerr)
		}
	}()
	if _, err := c.pool.Exec(ctx, `SELECT pg_reload_conf()`); err != nil {
		return fmt.Errorf("reload: %w", err)
	}
	return poll(ctx, time.Minute, "the slot to be invalidated", func() (bool, error) {
		// A logged table: its rows are WAL. 40 MiB is more than two segments.
		for _, q := range []string{
			`CREATE TABLE IF NOT EXISTS chaos_wal_logged (b bytea)`,
			`INSERT INTO chaos_wal_logged SELECT convert_to(repeat(md5(g::text), 64), 'UTF8') FROM generate_series(1, 20000) g`,
			`TRUNCATE chaos_wal_logged`, `SELECT pg_switch_wal()`, `CHECKPOINT`,
		} {
			if _, err := c.pool.Exec(ctx, q); err != nil {
				return false, err
			}
		}
		var status *string
		err := c.pool.QueryRow(ctx, `SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'chaos'`).Scan(&status)
		return err == nil && status != nil && *status == "lost", err
	})
}

// resync runs the documented recovery through the binary, as an operator would.
func (c *chaos) resync(ctx context.Context, since time.Time) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.fleet.bin, "cdc", "resync", "--since", since.UTC().Format(time.RFC3339))
	cmd.Env = append(os.Environ(), c.fleet.env...)
	out, err := cmd.CombinedOutput()
	_ = os.WriteFile(filepath.Join(c.fleet.logDir, "resync.log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("sluice cdc resync --since %s: %w: %s", since.UTC().Format(time.RFC3339), err, out)
	}
	c.log.Info("resync done", "output", string(out))
	return nil
}
