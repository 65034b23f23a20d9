package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// EraseCmd groups erasure on request.
type EraseCmd struct {
	Tenant  EraseTenantCmd  `cmd:"" help:"Offboard a tenant: delete every row of it (events, effects, sources, workspaces, endpoints and their deliveries, the tenant)."`
	Subject EraseSubjectCmd `cmd:"" help:"Purge the stored payloads that mention a subject, and their events' deliveries to endpoints; event keys stay, so redeliveries stay duplicates."`
}

// EraseTenantCmd deletes one tenant's data.
type EraseTenantCmd struct {
	Output
	ID  string `arg:"" name:"tenant-id" help:"The tenant to erase." input:"uuid"`
	Yes bool   `name:"yes" help:"Do it (nothing is deleted without it)."`
}

func (c *EraseTenantCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	if !c.Yes {
		return errors.New("erasing a tenant deletes all of its data for good: add --yes")
	}
	set, err := g.effects()
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	e, err := lifecycle.EraseTenant(ctx, pool, c.ID, set.Erasures())
	if err != nil {
		return err
	}
	log.Info("tenant erased", slog.String("tenant_id", c.ID), slog.Int64("events", e.Events), slog.Int64("outbox_rows", e.OutboxRows),
		slog.Int64("effects", e.Effects))
	return c.print(c.ID, map[string]any{"events": e.Events, "payloads": e.Payloads, "outbox_rows": e.OutboxRows,
		"dead_letters": e.DeadLetters, "effects": e.Effects, "endpoints": e.Endpoints, "deliveries": e.Deliveries,
		"delivery_attempts": e.DeliveryAttempts},
		fmt.Sprintf("events %d, payloads %d, outbox rows %d, dead letters %d, effects %d", e.Events, e.Payloads, e.OutboxRows, e.DeadLetters, e.Effects)+
			destinationsErased(e.Endpoints, e.Deliveries, e.DeliveryAttempts))
}

// EraseSubjectCmd purges payloads mentioning a subject.
type EraseSubjectCmd struct {
	Output
	Subject string        `arg:"" name:"subject" help:"Text to look for in stored bodies, as it appears in them (e.g. an e-mail address, or \"cus_123\" with its quotes)."`
	Tenant  string        `name:"tenant" help:"Only this tenant's payloads (default: every tenant's)." input:"uuid"`
	Timeout time.Duration `name:"timeout" default:"10m" help:"Give up after this long (the purge scans every kept payload)."`
}

func (c *EraseSubjectCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	e, err := lifecycle.EraseSubject(ctx, pool, c.Tenant, c.Subject)
	if err != nil {
		return err
	}
	// The subject itself is personal data: it is not logged.
	log.Info("subject erased", slog.String("tenant_id", c.Tenant), slog.Int64("events", e.Events), slog.Int64("conflicts", e.Conflicts),
		slog.Int64("outbox_rows", e.OutboxRows), slog.Int64("dead_letters", e.DeadLetters))
	return c.print("erased", map[string]any{"events": e.Events, "conflicts": e.Conflicts, "outbox_rows": e.OutboxRows, "dead_letters": e.DeadLetters,
		"deliveries": e.Deliveries, "delivery_attempts": e.DeliveryAttempts},
		fmt.Sprintf("events %d, conflicts %d, outbox rows %d, dead letters %d", e.Events, e.Conflicts, e.OutboxRows, e.DeadLetters)+
			destinationsErased(0, e.Deliveries, e.DeliveryAttempts))
}

// destinationsErased is what an erasure took of a tenant's destinations,
// said only when it took any (most tenants have no endpoint): ", endpoints
// 1, deliveries 20 (attempts 3)".
func destinationsErased(endpoints, deliveries, attempts int64) string {
	var out string
	if endpoints > 0 {
		out += fmt.Sprintf(", endpoints %d", endpoints)
	}
	if deliveries > 0 || attempts > 0 {
		out += fmt.Sprintf(", deliveries %d (attempts %d)", deliveries, attempts)
	}
	return out
}
