package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// DeliveryCmd groups the deliveries of events to tenants' endpoints.
type DeliveryCmd struct {
	List   DeliveryListCmd   `cmd:"" help:"List deliveries to endpoints, newest first."`
	Get    DeliveryGetCmd    `cmd:"" help:"Show a delivery with every request made: the failed ones and its success."`
	Retry  DeliveryRetryCmd  `cmd:"" help:"Send a delivery again now, whatever its state, with the same webhook-id (audited)."`
	Replay DeliveryReplayCmd `cmd:"" help:"Send an endpoint's deliveries created in [--since, --until) again, oldest first, at most 10000 a run (audited)."`
	// RetryDead is named for what it does: a retry of many.
	RetryDead DeliveryRetryDeadCmd `cmd:"" name:"retry-dead" help:"Count an endpoint's dead deliveries by selection (window, --type, --error-class); with --execute, send them again, oldest first, at most 10000 a run (audited)."`
}

// DeliveryListCmd lists deliveries.
type DeliveryListCmd struct {
	Output
	OperatePaging
	TimeRange
	Tenant   string `name:"tenant" help:"Only this tenant's." input:"uuid"`
	Endpoint string `name:"endpoint" help:"Only this endpoint's." input:"uuid"`
	State    string `name:"state" enum:",pending,delivered,dead" default:"" help:"Only deliveries in this state: pending, delivered or dead."`
	EventID  string `name:"event-id" help:"Only the deliveries of this event id."`
	InboxID  int64  `name:"inbox-id" help:"Only the deliveries of this inbox row (the id events search prints)." input:"id"`
}

func (c *DeliveryListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.deliveryStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	items, next, err := s.ListDeliveries(ctx, endpoints.DeliveryFilter{TenantID: c.Tenant, EndpointID: c.Endpoint,
		State: endpoints.DeliveryState(c.State), EventID: c.EventID, InboxID: c.InboxID, Since: c.Since, Until: c.Until,
		After: c.Cursor, Limit: int(c.Limit)})
	if err != nil {
		return err
	}
	return printList(c.Output, items, next, "ID\tCREATED\tENDPOINT\tEVENT\tTYPE\tSTATE\tATTEMPTS\tRULES\tLAST STATUS\tLAST ERROR", func(d endpoints.Delivery) []any {
		return []any{d.ID, d.CreatedAt.UTC().Format(time.RFC3339), d.EndpointID, d.EventID, d.EventType, d.State, d.Attempts,
			rules(d), statusOrDash(d.LastStatus), oneLine(orDash(d.LastError))}
	})
}

// DeliveryGetCmd shows one delivery.
type DeliveryGetCmd struct {
	Output
	ID int64 `arg:"" name:"delivery-id" help:"Delivery id, as delivery list prints it." input:"id"`
}

func (c *DeliveryGetCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.deliveryStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	d, err := s.Delivery(ctx, c.ID)
	if err != nil {
		return err
	}
	return printDelivery(c.Output, d)
}

// DeliveryRetryCmd sends one delivery again.
type DeliveryRetryCmd struct {
	Output
	ID int64 `arg:"" name:"delivery-id" help:"Delivery id, as delivery list prints it." input:"id"`
}

func (c *DeliveryRetryCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.deliveryStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	d, err := s.Retry(ctx, c.ID)
	if err != nil {
		return err
	}
	return printDelivery(c.Output, d)
}

// DeliveryReplayCmd sends an endpoint's window again.
type DeliveryReplayCmd struct {
	Output
	Endpoint string        `name:"endpoint" required:"" help:"The endpoint whose deliveries are sent again." input:"uuid"`
	Since    time.Time     `name:"since" required:"" format:"2006-01-02T15:04:05Z07:00" help:"Deliveries created from this time (RFC 3339), inclusive."`
	Until    time.Time     `name:"until" required:"" format:"2006-01-02T15:04:05Z07:00" help:"Deliveries created before this time; at most --payload-horizon after --since."`
	Horizon  time.Duration `name:"payload-horizon" env:"SLUICE_PAYLOAD_HORIZON" default:"168h" help:"The deployment's payload horizon: the longest window replayed (nothing older is kept)."`
}

func (c *DeliveryReplayCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.deliveryStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	r, err := s.Replay(ctx, endpoints.ReplayWindow{EndpointID: c.Endpoint, Since: c.Since, Until: c.Until, Horizon: c.Horizon})
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return printOne(c.Output, r, "")
	}
	// The count alone on the first line, as the other commands print
	// their id; where to go on from under it.
	fmt.Println(r.Replayed)
	fmt.Printf("replayed %d deliveries of endpoint %s (tenant %s)\n", r.Replayed, shown(r.EndpointID), shown(r.TenantID))
	if r.NextSince != nil {
		fmt.Printf("more: --since %s\n", r.NextSince.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// DeliveryRetryDeadCmd retries an endpoint's dead deliveries by selection:
// a dry run unless --execute, as kafka-consumer-groups --reset-offsets is.
type DeliveryRetryDeadCmd struct {
	Output
	Endpoint   string        `name:"endpoint" required:"" help:"The endpoint whose dead deliveries are sent again." input:"uuid"`
	Since      time.Time     `name:"since" required:"" format:"2006-01-02T15:04:05Z07:00" help:"Deliveries created from this time (RFC 3339), inclusive."`
	Until      time.Time     `name:"until" required:"" format:"2006-01-02T15:04:05Z07:00" help:"Deliveries created before this time; at most --payload-horizon after --since."`
	Type       string        `name:"type" help:"Only these event types: an exact type, a prefix ending in .* (stripe.invoice.*), or *." input:"max=200"`
	ErrorClass string        `name:"error-class" enum:",status,request,refused_address,dns,connect,timeout,tls,reset,canceled,transformation,other" default:"" help:"Only deliveries whose last request failed so: status, timeout, connect, tls, dns, reset, refused_address, request, canceled, transformation (the endpoint's transformation failed over the event), other."`
	Execute    bool          `name:"execute" help:"Send them again; without it, only count them (a dry run)."`
	Horizon    time.Duration `name:"payload-horizon" env:"SLUICE_PAYLOAD_HORIZON" default:"168h" help:"The deployment's payload horizon: the longest window retried (nothing older is kept)."`
}

func (c *DeliveryRetryDeadCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.deliveryStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	sel := endpoints.DeadSelection{ReplayWindow: endpoints.ReplayWindow{EndpointID: c.Endpoint, Since: c.Since, Until: c.Until, Horizon: c.Horizon},
		EventType: c.Type, ErrorClass: c.ErrorClass}
	if !c.Execute {
		n, err := s.CountDead(ctx, sel)
		if err != nil {
			return err
		}
		if c.Output.Output == "json" {
			return printOne(c.Output, n, "")
		}
		fmt.Println(n.Retryable)
		more := ""
		if n.More {
			more = " (at least: one run retries the oldest 10000)"
		}
		fmt.Printf("%d dead deliveries of endpoint %s selected%s; nothing changed: run again with --execute to send them\n", n.Retryable, shown(n.EndpointID), more)
		return nil
	}
	r, err := s.RetryDead(ctx, sel)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return printOne(c.Output, r, "")
	}
	fmt.Println(r.Retried)
	fmt.Printf("retried %d dead deliveries of endpoint %s (tenant %s)\n", r.Retried, shown(r.EndpointID), shown(r.TenantID))
	if r.NextSince != nil {
		fmt.Printf("more: --since %s\n", r.NextSince.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// printDelivery prints a delivery and its requests.
func printDelivery(o Output, d endpoints.Delivery) error {
	if err := printOne(o, d, fmt.Sprint(d.ID), field{"endpoint", d.EndpointID}, field{"tenant", d.TenantID},
		field{"webhook id", d.WebhookID}, field{"event", d.EventID + " (" + d.EventType + ")"}, field{"partition key", d.PartitionKey},
		field{"state", d.State}, field{"attempts", d.Attempts}, field{"next at", timeOrDash(d.NextAt)},
		field{"created", d.CreatedAt.UTC().Format(time.RFC3339Nano)}, field{"delivered", timeOrDash(d.DeliveredAt)},
		field{"last status", statusOrDash(d.LastStatus)}, field{"last error", orDash(d.LastError)},
		field{"rules version", versionOrDash(d.RulesVersion)}, field{"sent with rules version", versionOrDash(d.SentRulesVersion)}); err != nil || o.Output == "json" {
		return err
	}
	section("requests", len(d.History), "ATTEMPT\tAT\tSTATUS\tLATENCY MS\tRULES\tERROR\tANSWER", func(tb *table) {
		for _, a := range d.History {
			tb.row(a.Attempt, a.At.UTC().Format(time.RFC3339Nano), statusOrDash(a.Status), a.LatencyMS, versionOrDash(&a.RulesVersion),
				oneLine(orDash(strings.TrimSpace(a.ErrorClass+" "+a.Error))), oneLine(orDash(a.Answer)))
		}
	})
	return nil
}

// rules is the rules' versions of a delivery in one cell: the one it was
// created under, and the one its latest request sent with when they differ
// ("2>3").
func rules(d endpoints.Delivery) string {
	created, sent := versionOrDash(d.RulesVersion), versionOrDash(d.SentRulesVersion)
	if sent == "-" || sent == created {
		return created
	}
	return created + ">" + sent
}

// versionOrDash is a rules' version, or "-" when unknown (written before
// versions).
func versionOrDash(v *int64) string {
	if v == nil || *v == 0 {
		return "-"
	}
	return fmt.Sprint(*v)
}

func statusOrDash(status int) string {
	if status == 0 {
		return "-"
	}
	return fmt.Sprint(status)
}

// requests says a delivery's requests in one cell: each attempt's number,
// status or error class, and time, oldest first.
func requests(as []endpoints.Attempt) string {
	if len(as) == 0 {
		return "-"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		what := a.ErrorClass
		if a.Status != 0 {
			what = fmt.Sprint(a.Status)
		}
		parts[i] = fmt.Sprintf("#%d %s %s", a.Attempt, what, a.At.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}

// deliveryStore is the endpoints store over the database, acting for the
// CLI (audited with no token).
func (g *Globals) deliveryStore(ctx context.Context) (endpoints.Store, func(), error) {
	pool, err := g.pool(ctx)
	if err != nil {
		return endpoints.Store{}, nil, err
	}
	return endpoints.Store{Pool: pool, Actor: &audit.Actor{}}, pool.Close, nil
}
