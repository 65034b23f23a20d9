package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// ConflictsCmd groups the conflicting deliveries: an event key delivered
// again with other content (the original stands, the newcomer is kept).
type ConflictsCmd struct {
	List ConflictsListCmd `cmd:"" help:"List conflicting deliveries (same event key, different content), newest first."`
	Get  ConflictsGetCmd  `cmd:"" help:"Show a conflict with both contents, the original and the newcomer (audited)."`
}

// ConflictsListCmd lists conflicts.
type ConflictsListCmd struct {
	Output
	OperatePaging
	TimeRange
	Tenant string `name:"tenant" help:"Only this tenant's." input:"uuid"`
}

func (c *ConflictsListCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	p, err := op.Conflicts(ctx, nil, operate.ConflictFilter{TenantID: c.Tenant, Since: c.Since, Until: c.Until,
		After: c.Cursor, Limit: int(c.Limit)})
	if err != nil {
		return err
	}
	return printList(c.Output, p.Items, p.Next, "ID\tRECEIVED\tTENANT\tSOURCE\tEVENT\tTYPE\tORIGINAL RECEIVED", func(cf operate.Conflict) []any {
		return []any{cf.ID, cf.ReceivedAt.UTC().Format(time.RFC3339), cf.TenantID, cf.SourceID, cf.EventID, cf.EventType,
			cf.OriginalAt.UTC().Format(time.RFC3339)}
	})
}

// ConflictsGetCmd shows one conflict.
type ConflictsGetCmd struct {
	Output
	ID string `arg:"" name:"conflict-id" help:"Conflict id, as conflicts list prints it."`
}

func (c *ConflictsGetCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	d, err := op.ConflictByID(ctx, nil, c.ID)
	if err != nil {
		return err
	}
	if err := recordRead(ctx, pool, "conflict", c.ID, d.TenantID); err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(d)
	}
	if err := printOne(c.Output, d, d.ID, field{"tenant", d.TenantID}, field{"source", d.SourceID}, field{"event", d.EventID},
		field{"type", d.EventType}, field{"inbox id", d.InboxID}, field{"original received", d.OriginalAt.UTC().Format(time.RFC3339Nano)},
		field{"newcomer received", d.ReceivedAt.UTC().Format(time.RFC3339Nano)}, field{"newcomer sha256", hex.EncodeToString(d.BodySHA256)}); err != nil {
		return err
	}
	for _, b := range []struct {
		title string
		p     operate.Payload
	}{{"original (stands)", d.Original}, {"newcomer (kept aside)", d.Newcomer}} {
		fmt.Printf("\n%s: %s\n", b.title, b.p.State)
		if b.p.State == operate.PayloadKept {
			fmt.Println(shownMessage(string(b.p.Body)))
		}
	}
	return nil
}
