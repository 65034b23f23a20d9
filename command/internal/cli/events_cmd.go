package cli

// "Why didn't I get my credits?" from the command line: the inbox search,
// one event's trail and its payload, as the admin API's /events routes
// answer them (internal/operator/operate runs both).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// EventsCmd groups the inbox's commands.
type EventsCmd struct {
	Search  EventsSearchCmd  `cmd:"" help:"Search the inbox, newest first (name an event or object id, a tenant, a source, a status other than published, or --since)."`
	Trail   EventsTrailCmd   `cmd:"" help:"One event's trail: deliveries, the effects on its object with the Kafka record each group applied, sends, dead letters, corrections, deliveries to its endpoints."`
	Payload EventsPayloadCmd `cmd:"" help:"Print an event's verified body, byte for byte (audited); -o json: its state and the body in base64."`
}

// TimeRange is the --since/--until of the lists.
type TimeRange struct {
	Since time.Time `name:"since" format:"2006-01-02T15:04:05Z07:00" help:"Only from this time (RFC 3339), inclusive."`
	Until time.Time `name:"until" format:"2006-01-02T15:04:05Z07:00" help:"Only before this time (RFC 3339)."`
}

// OperatePaging selects one page of an operate list (pass the printed
// cursor on).
type OperatePaging struct {
	Cursor string    `name:"cursor" help:"Start after this cursor (printed under a full page)." input:"max=512"`
	Limit  pageLimit `name:"limit" default:"50" help:"At most this many, 1 to 500."`
}

// operator is operate's operator over the database alone, and its pool
// (the caller closes it).
func (g *Globals) operator(ctx context.Context) (*operate.Operator, *pgxpool.Pool, error) {
	pool, err := g.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	return operate.New(pool, nil, g.operateConfig(groups.Options{})), pool, nil
}

// recordRead leaves the audit row of a payload read (action
// <resource>.read_payload), as the admin API does; with no token: the CLI
// acts with the database's credentials.
func recordRead(ctx context.Context, pool *pgxpool.Pool, resource, id, tenant string) error {
	return (&audit.Actor{}).Record(ctx, pool, audit.Target{Action: resource + ".read_payload", Resource: resource, ID: id, TenantID: tenant})
}

// EventsSearchCmd searches the inbox.
type EventsSearchCmd struct {
	Output
	OperatePaging
	TimeRange
	EventID   string `name:"event-id" help:"The provider's event id (evt_..., a delivery GUID)."`
	ObjectID  string `name:"object-id" help:"The object the event is about, e.g. an invoice id."`
	Tenant    string `name:"tenant" help:"Only this tenant's events." input:"uuid"`
	Source    string `name:"source" help:"Only this source's events." input:"uuid"`
	EventType string `name:"type" help:"As stored, e.g. stripe.invoice.paid."`
	Status    string `name:"status" help:"Only events in this status: published, unhandled, quarantined or waiting."`
}

func (c *EventsSearchCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	p, err := op.Search(ctx, nil, operate.SearchFilter{EventID: c.EventID, ObjectID: c.ObjectID, TenantID: c.Tenant,
		SourceID: c.Source, EventType: c.EventType, Status: inbox.Status(c.Status), Since: c.Since, Until: c.Until,
		After: c.Cursor, Limit: int(c.Limit)})
	if err != nil {
		return err
	}
	return printList(c.Output, p.Items, p.Next, "ID\tRECEIVED\tTENANT\tEVENT\tTYPE\tOBJECT\tSTATUS\tREASON", func(e operate.Event) []any {
		return []any{e.ID, e.ReceivedAt.UTC().Format(time.RFC3339), e.TenantID, e.EventID, e.EventType,
			orDash(e.ObjectType + " " + e.ObjectID), e.Status, orDash(oneLine(e.Reason))}
	})
}

// eventRef names one event as people do: by the provider's event id
// (what a provider's dashboard or a support ticket shows), or by its inbox
// id (the ID events search prints).
type eventRef struct {
	Event  string `arg:"" name:"event" help:"The provider's event id (evt_..., a delivery GUID), or the event's inbox id (the ID events search prints; a number names an inbox id unless a provider's event has it)." input:"max=255"`
	Source string `name:"source" help:"The source the event came through, when several sources delivered an event by that id." input:"uuid"`
}

// ambiguousShown is how many of the events an id names a refusal lists.
const ambiguousShown = 10

// inboxID is the inbox id of the event r names: the one event the
// provider's event id names (of --source when given), or, for a number
// naming none, the event of that inbox id. An id several events have is
// refused with each of them, to be told apart by --source or the inbox id.
func (r eventRef) inboxID(ctx context.Context, op *operate.Operator) (int64, error) {
	p, err := op.Search(ctx, nil, operate.SearchFilter{EventID: r.Event, SourceID: r.Source, Limit: ambiguousShown})
	if err != nil {
		return 0, err
	}
	switch {
	case len(p.Items) == 1:
		return p.Items[0].ID, nil
	case len(p.Items) > 1:
		return 0, ambiguousEvent(r.Event, p.Items, p.Next != "")
	}
	id, err := strconv.ParseInt(r.Event, 10, 64)
	if err != nil || id < 1 || r.Source != "" {
		return 0, refusal.NoSuch("event", r.Event+r.of())
	}
	if _, err := op.EventTenant(ctx, id); err != nil {
		return 0, err
	}
	return id, nil
}

func (r eventRef) of() string {
	if r.Source == "" {
		return ""
	}
	return " from source " + r.Source
}

// ambiguousEvent names the events one provider's event id names.
func ambiguousEvent(id string, events []operate.Event, more bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d events have the event id %s: name one with --source, or by its inbox id:", len(events), id)
	for _, e := range events {
		fmt.Fprintf(&b, "\n  inbox id %d: source %s (tenant %s, account %s), received %s", e.ID, e.SourceID, e.TenantID,
			e.SourceAccount, e.ReceivedAt.UTC().Format(time.RFC3339))
	}
	if more {
		b.WriteString("\n  and more: sluice events search --event-id " + id)
	}
	return errors.New(b.String())
}

// EventsTrailCmd prints an event's trail.
type EventsTrailCmd struct {
	Output
	eventRef
}

func (c *EventsTrailCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	id, err := c.inboxID(ctx, op)
	if err != nil {
		return err
	}
	t, err := op.Trail(ctx, nil, id)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(t)
	}
	return printTrail(t)
}

// printTrail prints a trail as its sections, each a table ("none" when
// empty).
func printTrail(t operate.Trail) error {
	e := t.Event
	if err := printOne(Output{}, nil, fmt.Sprintf("event %d", e.ID), field{"event id", e.EventID}, field{"type", e.EventType},
		field{"object", orDash(e.ObjectType + " " + e.ObjectID)}, field{"tenant", e.TenantID},
		field{"source", e.SourceID + " (account " + e.SourceAccount + ")"}, field{"received", e.ReceivedAt.UTC().Format(time.RFC3339Nano)},
		field{"status", e.Status}, field{"reason", orDash(e.Reason)},
		field{"verification", t.Verification.Outcome + " (" + t.Verification.Scheme + ")"}, field{"erased", timeOrDash(e.ErasedAt)}); err != nil {
		return err
	}
	section("deliveries", len(t.Deliveries), "RECEIVED\tOUTCOME", func(tb *table) {
		for _, d := range t.Deliveries {
			tb.row(d.ReceivedAt.UTC().Format(time.RFC3339Nano), d.Outcome)
		}
	})
	section("effects on its object", len(t.Effects), "GROUP\tKIND\tBUSINESS KEY\tCAUSED BY\tWORKSPACE\tCREDITS\tSTATE\tAPPLIED FROM\tPROCESSED", func(tb *table) {
		for _, f := range t.Effects {
			cause := f.EventID
			if f.ThisEvent {
				cause += " (this event)"
			}
			tb.row(f.Group, f.Kind, f.BusinessKey, cause, orDash(f.WorkspaceID), f.Credits, orDash(f.State), position(f.Applied),
				timeOrDash(f.ProcessedAt))
		}
	})
	section("sends", len(t.Sends), "IDEMPOTENCY KEY\tGROUP\tRECORD\tSTATUS\tSENT", func(tb *table) {
		for _, s := range t.Sends {
			tb.row(s.IdempotencyKey, s.Group, fmt.Sprintf("%s/%d@%d", s.Topic, s.Partition, s.Offset), s.Status, s.SentAt.UTC().Format(time.RFC3339))
		}
	})
	section("dead letters", len(t.DeadLetters), "ID\tGROUP\tRECORD\tATTEMPTS\tLAST FAILED\tREPLAYED\tREASON", func(tb *table) {
		for _, d := range t.DeadLetters {
			tb.row(d.ID, d.Group, fmt.Sprintf("%s/%d@%d", d.Topic, d.Partition, d.Offset), d.Attempts,
				d.LastFailedAt.UTC().Format(time.RFC3339), timeOrDash(d.ReplayedAt), oneLine(d.Reason))
		}
	})
	section("reconciliation", len(t.Corrections), "RUN\tEVENT\tOUTCOME\tAT", func(tb *table) {
		for _, r := range t.Corrections {
			tb.row(r.RunID, r.EventID, r.Outcome, r.At.UTC().Format(time.RFC3339))
		}
	})
	section("destinations", len(t.Destinations), "ENDPOINT\tDELIVERY\tSTATE\tATTEMPTS\tREQUESTS", func(tb *table) {
		for _, d := range t.Destinations {
			tb.row(d.EndpointID, d.ID, d.State, d.Attempts, requests(d.History))
		}
	})
	// Labelled as what it is: today's endpoints judging the event now.
	section("taken now by today's endpoints (their filters and expressions as they are now, not a record)", len(t.TakenNow),
		"ENDPOINT	TAKES	VERDICT	REASON", func(tb *table) {
			for _, k := range t.TakenNow {
				tb.row(k.EndpointID, k.Takes, k.Verdict, oneLine(orDash(k.Reason)))
			}
		})
	return nil
}

// section prints a titled table of n rows, or the title and "none".
func section(title string, n int, header string, rows func(*table)) {
	if n == 0 {
		fmt.Printf("\n%s: none\n", title)
		return
	}
	fmt.Printf("\n%s:\n", title)
	tb := newTable(os.Stdout, header)
	rows(tb)
	_ = tb.flush()
}

func position(p operate.Position) string {
	if p.Topic == nil || p.Partition == nil || p.Offset == nil {
		return "-"
	}
	return fmt.Sprintf("%s/%d@%d", *p.Topic, *p.Partition, *p.Offset)
}

// EventsPayloadCmd prints an event's body.
type EventsPayloadCmd struct {
	Output
	eventRef
}

func (c *EventsPayloadCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	id, err := c.inboxID(ctx, op)
	if err != nil {
		return err
	}
	tenant, err := op.EventTenant(ctx, id)
	if err != nil {
		return err
	}
	p, err := op.EventPayload(ctx, nil, id)
	if err != nil {
		return err
	}
	if err := recordRead(ctx, pool, "event", strconv.FormatInt(id, 10), tenant); err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(p)
	}
	if p.State != operate.PayloadKept {
		return fmt.Errorf("event %d has no payload left: %s (its key remains)", id, p.State)
	}
	_, err = os.Stdout.Write(p.Body)
	return err
}
