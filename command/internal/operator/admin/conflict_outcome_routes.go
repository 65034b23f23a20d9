package admin

import (
	"context"
	"net/http"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/audit"
)

// ConflictDecision is what an operator made of a conflict.
type ConflictDecision struct {
	Outcome string `json:"outcome" enum:"dismissed,resolved" doc:"dismissed: the content that stands is right and the newcomer was noise; resolved: it was set right another way (the provider sent it again under a new id, a reconciliation, a correction)."`
	Note    string `json:"note,omitempty" maxLength:"2000" doc:"Why, for the next person who reads it."`
}

// decideConflictRoute records an operator's decision on a conflict: the
// conflicts list then says it is no longer open (state=open lists those
// still to look at). Deciding again replaces the decision; both are in the
// audit trail.
func decideConflictRoute(a *API, o *operate.Operator) {
	decide := op("decide-conflict", http.MethodPost, "/conflicts/{conflict_id}/decide",
		"Dismiss a conflict (the content that stands is right) or mark it resolved another way, with a note (audited)", "conflicts")
	decide.DefaultStatus = http.StatusOK
	type decideIn struct {
		ConflictPath
		Body ConflictDecision
	}
	Handle(a, Route{Op: decide, Scope: ScopeTenant, Resource: "conflict", Action: "conflict.decide"},
		func(ctx context.Context, c Call, in *decideIn) (*body[operate.Conflict], error) {
			d, err := o.DecideConflict(ctx, scopeOf(c), in.ConflictID, operate.ConflictOutcome{Outcome: in.Body.Outcome, Note: in.Body.Note,
				Actor: c.Token.Name})
			if err != nil {
				return nil, err
			}
			a.record(ctx, c, audit.Target{Action: "conflict.decide", Resource: "conflict", ID: in.ConflictID, TenantID: d.TenantID})
			return reply(d), nil
		})
}
