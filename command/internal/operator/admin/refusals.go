package admin

import (
	"errors"
	"net/http"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// ProblemTypes is where the problem types of the sub-kinds live: a
// sub-kind's type is this followed by its code.
const ProblemTypes = "https://sluice.dev/problems/"

// Answer is what the API answers one refusal with.
type Answer struct {
	// Refusal is a kind's sentinel (refusal.ErrNotFound) or a sub-kind's
	// (catalog.ErrQuota).
	Refusal *refusal.Error
	Status  int
	// Type is the problem type; "" is about:blank, for a kind: its status
	// says all there is (RFC 9457, 4.2.1).
	Type string
	// Means is what it means, for the manual.
	Means string
}

// refusals is the one mapping of internal/refusal to HTTP, for every
// route of this package: each kind is one status of its own (no two kinds
// share one, so a client, the console among them, reads the kind back from
// the status) with about:blank; a sub-kind a client tells apart is its
// kind's status with a problem type of its own. A sub-kind not listed is
// answered as its kind: the admin tokens' unknown, revoked and expired
// are one answer, so a caller learns nothing about which tokens exist.
// docs/admin-api.md states this table (TestTheManualStatesTheRefusalTable).
var refusals = []Answer{
	{refusal.ErrNotFound, http.StatusNotFound, "", "the id names nothing, or another tenant's"},
	{refusal.ErrConflict, http.StatusConflict, "", "the request clashes with what exists (a name taken, a cap reached, a change meanwhile)"},
	{catalog.ErrBuiltin, http.StatusConflict, ProblemTypes + "builtin", "the event type's name is a built-in type of its source kind"},
	{catalog.ErrQuota, http.StatusConflict, ProblemTypes + "quota", "the tenant has as many event types as it may"},
	{catalog.ErrIncompatible, http.StatusConflict, ProblemTypes + "incompatible", "a version declared compatible would refuse stored events"},
	{consumers.ErrAlreadyReplayed, http.StatusConflict, ProblemTypes + "already_replayed", "the dead letter was replayed before"},
	{consumers.ErrDeadLetterExpired, http.StatusConflict, ProblemTypes + "dead_letter_expired", "the dead letter was replayed and deleted since"},
	{offsets.ErrGroupActive, http.StatusConflict, ProblemTypes + "group_active", "the consumer group has running members"},
	{reconcile.ErrBusy, http.StatusConflict, ProblemTypes + "reconcile_busy", "the source is being reconciled now"},
	{refusal.ErrInvalid, http.StatusUnprocessableEntity, "", "an input is wrong (errors[] names each)"},
	{operate.ErrReplayFailed, http.StatusUnprocessableEntity, ProblemTypes + "replay_failed", "the replayed dead letter failed again (failed_id)"},
	{reconcile.ErrWindow, http.StatusUnprocessableEntity, ProblemTypes + "reconcile_window", "the window ends before it begins"},
	{tenancy.ErrNoAPICredentials, http.StatusUnprocessableEntity, ProblemTypes + "no_api_credentials", "the source has no API credentials to reconcile with"},
	{refusal.ErrForbidden, http.StatusForbidden, "", "the token may not (a read token acting, a scoped token on a route spanning tenants)"},
	{refusal.ErrUnauthenticated, http.StatusUnauthorized, "", "no token, or an unknown, revoked or expired one"},
	{refusal.ErrLimited, http.StatusTooManyRequests, "", "too many failed authentications from the address (Retry-After)"},
	{refusal.ErrUnavailable, http.StatusServiceUnavailable, "", "this process does not run what answers, or cannot check now"},
}

// Refusals is the table, for the manual's test and the console.
func Refusals() []Answer { return refusals }

// AnswerOf is what r is answered with: its sub-kind's row when the table
// lists it, else its kind's.
func AnswerOf(r *refusal.Error) Answer {
	var kind Answer
	for _, a := range refusals {
		switch {
		case a.Refusal.Kind != r.Kind:
		case a.Refusal.Code != "" && a.Refusal.Code == r.Code:
			return a
		case a.Refusal.Code == "":
			kind = a
		}
	}
	return kind
}

// RefusalOf is the refusal an answer says, read back from its status and
// problem type (the sub-kind's sentinel when the type names one, else the
// kind's); false for an answer that is no refusal (a success, a failure).
// The statuses huma answers itself for a request's form, 400 (no JSON, a
// malformed query), 413 and 415, read back as refusal.Invalid, as the audit
// trail records them.
func RefusalOf(status int, problemType string) (*refusal.Error, bool) {
	switch status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return refusal.ErrInvalid, true
	}
	var kind *refusal.Error
	for _, a := range refusals {
		switch {
		case a.Status != status:
		case a.Type != "" && a.Type == problemType:
			return a.Refusal, true
		case a.Refusal.Code == "":
			kind = a.Refusal
		}
	}
	return kind, kind != nil
}

// refusalProblem is the problem detail of err, which carries r: the
// table's status and type, err's own words (written for a person), and
// the members a refusal adds (a replay's failed letter).
func refusalProblem(err error, r *refusal.Error) *Problem {
	a := AnswerOf(r)
	p := newProblem(a.Status, err.Error())
	p.Type = a.Type
	var failed *operate.ReplayError
	if errors.As(err, &failed) {
		p.FailedID, p.Replayed = failed.ID, failed.Replayed
	}
	return p
}
