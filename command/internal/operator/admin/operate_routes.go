package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// OperateRoutes is the resource group of internal/operator/operate's
// operations: inbox search and one event's trail and payload, dead letters,
// conflicts, consumer groups, the slot and rewinds. Each handler calls one
// operation with the token's scope; operate decides what the scope sees, and
// the owners registered here answer 404 for another tenant's ids before a
// handler runs.
func OperateRoutes(o *operate.Operator, log *slog.Logger) func(*API) {
	return func(a *API) {
		a.Owner("inbox_id", "event", func(ctx context.Context, id string) (string, error) {
			n, err := parseID(id, "event")
			if err != nil {
				return "", err
			}
			return o.EventTenant(ctx, n)
		})
		a.Owner("dead_letter_id", "dead letter", func(ctx context.Context, id string) (string, error) {
			n, err := parseID(id, "dead letter")
			if err != nil {
				return "", err
			}
			return o.DeadLetterTenant(ctx, n)
		})
		a.Owner("conflict_id", "conflict", o.ConflictTenant)
		eventRoutes(a, o)
		deadLetterRoutes(a, o, log)
		conflictRoutes(a, o)
		groupRoutes(a, o)
		overviewRoutes(a, o)
		sampleRoutes(a, o)
	}
}

// overviewRoutes registers the overview: the figures the console's first
// page shows, of the token's tenant for a scoped token.
func overviewRoutes(a *API, o *operate.Operator) {
	type overviewIn struct {
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's figures (a scoped token: its own, always)."`
	}
	Handle(a, Route{Op: op("get-overview", http.MethodGet, "/overview",
		"The last hour at a glance: events accepted per minute by status, dead letters pending, conflicts, reconciliation corrections, endpoints failing", "overview"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *overviewIn) (*body[operate.Overview], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			var scope *operate.Scope
			if tenant != "" {
				scope = &operate.Scope{TenantID: tenant}
			}
			ov, err := o.Overview(ctx, scope, time.Now())
			return reply(ov), err
		})
}

// sampleRoutes registers the lag over the last hour, as this process sampled
// it: every group's and the slot's, deployment-wide (unscoped tokens only).
func sampleRoutes(a *API, o *operate.Operator) {
	Handle(a, Route{Op: op("get-overview-samples", http.MethodGet, "/overview/samples",
		"The consumer groups' lag and the relay slot's retained WAL over the last hour, sampled by this process every 15 s (none before it started)", "overview"),
		Scope: ScopeGlobal},
		func(ctx context.Context, c Call, _ *struct{}) (*body[operate.ProcessSamples], error) {
			h, err := o.Samples(scopeOf(c), time.Now())
			return reply(h), err
		})
}

// scopeOf is the operate scope of a token.
func scopeOf(c Call) *operate.Scope {
	if c.Token.Scoped() {
		return &operate.Scope{TenantID: c.Token.TenantID}
	}
	return nil
}

// parseID reads a numeric id of a path an owner is asked about (the edge
// refused any other before); anything else names nothing (404).
func parseID(id, what string) (int64, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return 0, refusal.NoSuch(what, id)
	}
	return n, nil
}

// record writes the audit row of an operate action that succeeded.
func (a *API) record(ctx context.Context, c Call, t audit.Target) {
	if err := c.Actor.Record(ctx, a.cfg.Pool, t); err != nil {
		a.log.ErrorContext(ctx, "audit record lost", slog.Any("error", err), slog.String("action", t.Action))
	}
}

// InboxPath, DeadLetterPath and ConflictPath name operate's ids.
type InboxPath struct {
	InboxID int64 `path:"inbox_id" minimum:"1" doc:"The event's inbox id (the id a search returns)."`
}
type DeadLetterPath struct {
	DeadLetterID int64 `path:"dead_letter_id" minimum:"1" doc:"Dead letter id."`
}

type ConflictPath struct {
	ConflictID string `path:"conflict_id" maxLength:"40" pattern:"^[1-9][0-9]{0,18}[-.][0-9]{1,19}$" patternDescription:"a conflict id: <inbox id>-<unix microseconds> (or the older <inbox id>.<unix microseconds>)" doc:"Conflict id, as a list of conflicts shows it."`
}
type GroupPath struct {
	Group string `path:"group" doc:"Consumer group (e.g. sluice.credits)."`
}

// TimeRange is the since/until filter of the lists (exported: see
// PageQuery).
type TimeRange struct {
	Since time.Time `query:"since" doc:"Only from this time (RFC 3339), inclusive."`
	Until time.Time `query:"until" doc:"Only before this time (RFC 3339); after since."`
}

// Resolve refuses since at or after until (422, on every list).
func (r *TimeRange) Resolve(huma.Context) []error {
	return checkRange("query.until", r.Since, r.Until)
}

func eventRoutes(a *API, o *operate.Operator) {
	type searchIn struct {
		PageQuery
		TimeRange
		TenantID  string `query:"tenant_id" format:"uuid" doc:"Only this tenant's events."`
		SourceID  string `query:"source_id" format:"uuid" doc:"Only this source's events."`
		EventID   string `query:"event_id" doc:"The provider's event id (evt_..., a delivery GUID)."`
		EventType string `query:"event_type" doc:"As stored, e.g. stripe.invoice.paid."`
		ObjectID  string `query:"object_id" doc:"The object the event is about, e.g. an invoice id."`
		Status    string `query:"status" enum:"published,unhandled,quarantined,waiting" doc:"Only events in this status."`
	}
	Handle(a, Route{Op: op("search-events", http.MethodGet, "/events",
		"Search the inbox, newest first (name an event or object id, a tenant, a source, a status other than published, or since; or nothing: the newest events)", "events"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *searchIn) (*listOut[operate.Event], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			p, err := o.Search(ctx, scopeOf(c), operate.SearchFilter{EventID: in.EventID, TenantID: tenant, SourceID: in.SourceID,
				EventType: in.EventType, ObjectID: in.ObjectID, Status: inbox.Status(in.Status), Since: in.Since, Until: in.Until,
				After: in.Cursor, Limit: in.Limit})
			return list(p.Items, p.Next), err
		})
	Handle(a, Route{Op: op("get-event-trail", http.MethodGet, "/events/{inbox_id}",
		"One event's trail: deliveries, the effects on its object with the Kafka record each group applied, sends, dead letters, corrections, deliveries to its endpoints (destinations)", "events"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *InboxPath) (*body[operate.Trail], error) {
			t, err := o.Trail(ctx, scopeOf(c), in.InboxID)
			return reply(t), err
		})
	Handle(a, Route{Op: op("get-event-payload", http.MethodGet, "/events/{inbox_id}/payload",
		"The event's verified body, byte for byte (base64; audited)", "events"),
		Scope: ScopeTenant, Resource: "event", Action: "event.read_payload", Payload: true},
		func(ctx context.Context, c Call, in *InboxPath) (*body[operate.Payload], error) {
			p, err := o.EventPayload(ctx, scopeOf(c), in.InboxID)
			return reply(p), err
		})
}

// DeadLetterFilterBody selects the dead letters a replay applies again.
type DeadLetterFilterBody struct {
	Group    string    `json:"group,omitempty" doc:"Only this consumer group's."`
	TenantID string    `json:"tenant_id,omitempty" format:"uuid" doc:"Only this tenant's (a scoped token: its own, whatever is named)."`
	Reason   string    `json:"reason,omitempty" doc:"Only letters whose reason contains this, case-insensitively."`
	Since    time.Time `json:"since,omitzero" doc:"Only letters that last failed from this time."`
	Until    time.Time `json:"until,omitzero" doc:"Only letters that last failed before this time; after since."`
}

// TransformSchema states the rule of the body: at least one filter (an
// empty filter would replay every letter).
func (DeadLetterFilterBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return atLeastOne(s, "group", "tenant_id", "reason", "since", "until")
}

// Resolve refuses since at or after until.
func (b *DeadLetterFilterBody) Resolve(huma.Context) []error {
	return checkRange("body.until", b.Since, b.Until)
}

func deadLetterRoutes(a *API, o *operate.Operator, log *slog.Logger) {
	type listIn struct {
		PageQuery
		TimeRange
		Group    string `query:"group" doc:"Only this consumer group's."`
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's."`
		Reason   string `query:"reason" doc:"Only letters whose reason contains this, case-insensitively."`
		Replayed bool   `query:"replayed" doc:"Include letters replayed already."`
	}
	Handle(a, Route{Op: op("list-dead-letters", http.MethodGet, "/dead-letters", "List dead letters, newest first (no payloads)", "dead-letters"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *listIn) (*listOut[operate.DeadLetter], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			p, err := o.DeadLetters(ctx, scopeOf(c), operate.DeadLetterFilter{Group: in.Group, TenantID: tenant, Reason: in.Reason,
				Since: in.Since, Until: in.Until, Replayed: in.Replayed, After: in.Cursor, Limit: in.Limit})
			return list(p.Items, p.Next), err
		})
	Handle(a, Route{Op: op("get-dead-letter", http.MethodGet, "/dead-letters/{dead_letter_id}",
		"A dead letter with its record: key, headers, payload (audited)", "dead-letters"),
		Scope: ScopeTenant, Resource: "dead_letter", Action: "dead_letter.read_payload", Payload: true},
		func(ctx context.Context, c Call, in *DeadLetterPath) (*body[operate.DeadLetterDetail], error) {
			d, err := o.DeadLetter(ctx, scopeOf(c), in.DeadLetterID)
			return reply(d), err
		})
	Handle(a, Route{Op: op("get-dead-letter-summary", http.MethodGet, "/dead-letters/{dead_letter_id}/summary",
		"A dead letter as the list shows it, without its record (not a payload read: not audited)", "dead-letters"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *DeadLetterPath) (*body[operate.DeadLetter], error) {
			d, err := o.DeadLetterSummary(ctx, scopeOf(c), in.DeadLetterID)
			return reply(d), err
		})
	Handle(a, Route{Op: op("replay-dead-letter", http.MethodPost, "/dead-letters/{dead_letter_id}/replay",
		"Apply a dead letter again through its group's idempotent handler (once: a second replay is 409; one that fails again is 422 with the reason and failed_id, and stays pending)", "dead-letters"),
		Scope: ScopeTenant, Resource: "dead_letter", Action: "dead_letter.replay"},
		func(ctx context.Context, c Call, in *DeadLetterPath) (*body[operate.ReplayResult], error) {
			id := in.DeadLetterID
			if err := o.ReplayDeadLetter(ctx, scopeOf(c), id); err != nil {
				return nil, err
			}
			a.record(ctx, c, audit.Target{Action: "dead_letter.replay", Resource: "dead_letter", ID: strconv.FormatInt(id, 10), TenantID: c.Token.TenantID})
			return reply(operate.ReplayResult{Replayed: []int64{id}}), nil
		})
	type countIn struct {
		TimeRange
		Group    string `query:"group" doc:"Only this consumer group's."`
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's."`
		Reason   string `query:"reason" doc:"Only letters whose reason contains this, case-insensitively."`
	}
	type countOut struct {
		Body struct {
			Pending int64 `json:"pending" doc:"Pending dead letters the filter selects: what POST /dead-letters/replay with the same filter would replay now."`
		}
	}
	Handle(a, Route{Op: op("count-dead-letters", http.MethodGet, "/dead-letters/count",
		"Count the pending dead letters a filter selects (the dry run of a filtered replay; time on last_failed_at)", "dead-letters"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *countIn) (*countOut, error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			n, err := o.CountDeadLetters(ctx, scopeOf(c), operate.DeadLetterFilter{Group: in.Group, TenantID: tenant, Reason: in.Reason,
				Since: in.Since, Until: in.Until})
			out := &countOut{}
			out.Body.Pending = n
			return out, err
		})
	replaySet := op("replay-dead-letters", http.MethodPost, "/dead-letters/replay",
		"Replay every pending dead letter a filter selects, oldest first; stops at the first that fails again: 422 with the reason, failed_id and the letters replayed before it", "dead-letters")
	replaySet.DefaultStatus = http.StatusOK
	Handle(a, Route{Op: replaySet, Scope: ScopeTenant, Resource: "dead_letter", Action: "dead_letter.replay_set"},
		func(ctx context.Context, c Call, in *body[DeadLetterFilterBody]) (*body[operate.ReplayResult], error) {
			// The named tenant only: a scoped token's own tenant is its
			// scope, not a filter, so {} stays "replay everything", refused.
			tenant := in.Body.TenantID
			if err := c.Tenant(tenant); tenant != "" && err != nil {
				return nil, err
			}
			f := in.Body
			res, err := o.ReplayDeadLetters(ctx, scopeOf(c), operate.DeadLetterFilter{Group: f.Group, TenantID: tenant, Reason: f.Reason,
				Since: f.Since, Until: f.Until}, log)
			if len(res.Replayed) > 0 || err == nil {
				a.record(ctx, c, audit.Target{Action: "dead_letter.replay_set", Resource: "dead_letter",
					ID: fmt.Sprintf("%d letters", len(res.Replayed)), TenantID: tenant})
			}
			if err != nil && res.FailedID != 0 && !errors.Is(err, operate.ErrReplayFailed) {
				// Not the letter's fault (the database, a group not here):
				// logged with how far the replay came.
				return nil, fmt.Errorf("replayed %v, stopped at dead letter %d: %w", res.Replayed, res.FailedID, err)
			}
			if err != nil {
				return nil, err
			}
			if res.Replayed == nil {
				res.Replayed = []int64{}
			}
			return reply(res), nil
		})
}

func conflictRoutes(a *API, o *operate.Operator) {
	type listIn struct {
		PageQuery
		TimeRange
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's."`
	}
	Handle(a, Route{Op: op("list-conflicts", http.MethodGet, "/conflicts",
		"List conflicting deliveries (same event key, different content), newest first", "conflicts"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *listIn) (*listOut[operate.Conflict], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			p, err := o.Conflicts(ctx, scopeOf(c), operate.ConflictFilter{TenantID: tenant, Since: in.Since, Until: in.Until,
				After: in.Cursor, Limit: in.Limit})
			return list(p.Items, p.Next), err
		})
	Handle(a, Route{Op: op("get-conflict", http.MethodGet, "/conflicts/{conflict_id}",
		"A conflict with both contents, the original and the newcomer (audited)", "conflicts"),
		Scope: ScopeTenant, Resource: "conflict", Action: "conflict.read_payload", Payload: true},
		func(ctx context.Context, c Call, in *ConflictPath) (*body[operate.ConflictDetail], error) {
			d, err := o.ConflictByID(ctx, scopeOf(c), in.ConflictID)
			return reply(d), err
		})
}

// RewindBody is where a rewind moves a group: exactly one of to, time or
// offset.
type RewindBody struct {
	DryRun *bool      `json:"dry_run,omitempty" default:"true" doc:"Say what would move and commit nothing; false executes. Default true."`
	To     string     `json:"to,omitempty" enum:"earliest,latest" doc:"The start or the end of every partition."`
	Time   *time.Time `json:"time,omitempty" doc:"The first record at or after this time (a partition with none: its end); at or after 1970-01-01T00:00:00Z, where Kafka's record times start."`
	Offset *int64     `json:"offset,omitempty" minimum:"0" doc:"This offset in every partition, kept within its start and end."`
}

// TransformSchema states the rule of the body: exactly one of to, time or
// offset.
func (RewindBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return exactlyOne(s, "to", "time", "offset")
}

// RewindOut is what a rewind moved, or would move.
type RewindOut struct {
	Group  string               `json:"group"`
	DryRun bool                 `json:"dry_run"`
	Moves  []operate.RewindMove `json:"moves" nullable:"false"`
}

func groupRoutes(a *API, o *operate.Operator) {
	type groupsOut struct {
		Body struct {
			Items []operate.GroupLag `json:"items" nullable:"false"`
		}
	}
	Handle(a, Route{Op: op("list-consumer-groups", http.MethodGet, "/consumer-groups",
		"Every consumer group's lag: total, slowest partition, each partition", "consumer-groups"), Scope: ScopeGlobal},
		func(ctx context.Context, c Call, _ *struct{}) (*groupsOut, error) {
			lags, err := o.ConsumerGroups(ctx, scopeOf(c))
			out := &groupsOut{}
			out.Body.Items = lags
			if out.Body.Items == nil {
				out.Body.Items = []operate.GroupLag{}
			}
			return out, err
		})
	Handle(a, Route{Op: op("get-consumer-group", http.MethodGet, "/consumer-groups/{group}", "One consumer group's lag", "consumer-groups"),
		Scope: ScopeGlobal},
		func(ctx context.Context, c Call, in *GroupPath) (*body[operate.GroupLag], error) {
			lags, err := o.ConsumerGroups(ctx, scopeOf(c), in.Group)
			if err != nil {
				return nil, err
			}
			if len(lags) == 0 {
				return nil, refusal.NoSuch("consumer group", in.Group)
			}
			return reply(lags[0]), nil
		})
	Handle(a, Route{Op: op("get-slot", http.MethodGet, "/slot", "The relay's replication slot: WAL retained, whether a relay streams", "consumer-groups"),
		Scope: ScopeGlobal},
		func(ctx context.Context, c Call, _ *struct{}) (*body[cdc.SlotStatus], error) {
			s, err := o.Slot(ctx, scopeOf(c))
			return reply(s), err
		})
	type rewindIn struct {
		GroupPath
		Body RewindBody
	}
	Handle(a, Route{Op: op("rewind-consumer-group", http.MethodPost, "/consumer-groups/{group}/rewind",
		"Move a stopped group's offsets (dry run unless dry_run is false), as sluice replay does", "consumer-groups"),
		Scope: ScopeGlobal, Resource: "consumer_group", Action: "consumer_group.rewind"},
		func(ctx context.Context, c Call, in *rewindIn) (*body[RewindOut], error) {
			b := in.Body
			if n := btoi(b.To != "") + btoi(b.Time != nil) + btoi(b.Offset != nil); n != 1 {
				return nil, refusal.InvalidField("to", "name exactly one of to (earliest, latest), time or offset")
			}
			if b.Time != nil && b.Time.Before(time.Unix(0, 0)) {
				// Kafka reads a time before the epoch as a negative
				// timestamp, which names its special offsets (-1 latest).
				return nil, refusal.InvalidField("time", "must be at or after 1970-01-01T00:00:00Z, where Kafka's record times start")
			}
			target := offsets.Target{Earliest: b.To == "earliest", Latest: b.To == "latest", Offset: -1}
			if b.Time != nil {
				target.Time = *b.Time
			}
			if b.Offset != nil {
				target.Offset = *b.Offset
			}
			execute := b.DryRun != nil && !*b.DryRun
			moves, err := o.Rewind(ctx, scopeOf(c), in.Group, target, execute)
			if err != nil {
				return nil, err
			}
			action := "consumer_group.rewind_dry_run"
			if execute {
				action = "consumer_group.rewind"
			}
			a.record(ctx, c, audit.Target{Action: action, Resource: "consumer_group", ID: in.Group})
			if moves == nil {
				moves = []operate.RewindMove{}
			}
			return reply(RewindOut{Group: in.Group, DryRun: !execute, Moves: moves}), nil
		})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
