package cli

import (
	"context"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
)

// AuditCmd reads the operators' audit trail (internal/audit): who did what
// to which target, over the admin API (its token) or this CLI (no token).
type AuditCmd struct {
	List AuditListCmd `cmd:"" help:"List the audit trail, newest first."`
}

// AuditListCmd lists audit entries.
type AuditListCmd struct {
	Output
	OperatePaging
	Tenant string `name:"tenant" help:"Only what was done in this tenant." input:"uuid"`
}

func (c *AuditListCmd) Run(ctx context.Context, g *Globals) error {
	var before int64
	if c.Cursor != "" {
		n, err := strconv.ParseInt(c.Cursor, 10, 64)
		if err != nil || n <= 0 {
			return refusal.InvalidField("--cursor", "not a cursor audit list printed")
		}
		before = n
	}
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if c.Tenant != "" {
		if _, err := s.Tenant(ctx, c.Tenant); err != nil {
			return err
		}
	}
	limit := int(c.Limit)
	entries, err := audit.List(ctx, s.Pool, audit.Filter{TenantID: c.Tenant, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	next := ""
	if len(entries) > limit {
		entries = entries[:limit]
		next = strconv.FormatInt(entries[limit-1].ID, 10)
	}
	return printList(c.Output, entries, next, "ID\tAT\tTOKEN\tACTION\tRESOURCE\tTARGET\tTENANT\tOUTCOME", func(e audit.Entry) []any {
		token := e.TokenID
		if token == "" {
			token = "(cli)"
		}
		return []any{e.ID, e.At.UTC().Format(time.RFC3339), token, e.Action, e.Resource, e.TargetID, orDash(e.TenantID), e.Outcome}
	})
}
