package admin

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/addrlimit"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
)

// authenticate runs before every operation: it finds the route's
// decisions, refuses a client over its failed-authentication budget,
// authenticates the bearer token, applies role and scope, and audits
// refusals and payload reads. Handlers run only past all of that.
func (a *API) authenticate(hc huma.Context, next func(huma.Context)) {
	op := hc.Operation()
	r, ok := op.Metadata["route"].(Route)
	if !ok {
		// Only Handle registers operations with huma; fail closed anyway.
		_ = huma.WriteErr(a.api, hc, http.StatusInternalServerError, "route declares no scope")
		return
	}
	if t := a.documentPath(hc.URL().Path); t != op.Path {
		// The router took another path's route for this method.
		hc.SetHeader("Allow", a.allowed(hc.URL().Path))
		_ = huma.WriteErr(a.api, hc, http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", hc.URL().Path, a.allowed(hc.URL().Path), op.Method))
		return
	}
	tok, ok := a.identify(hc)
	if !ok {
		return
	}
	actor := &audit.Actor{TokenID: tok.ID}
	target := audit.Target{Action: r.Action, Resource: r.Resource, ID: firstPathParam(hc, op), TenantID: tok.TenantID}
	audited := op.Method != http.MethodGet || r.Payload
	hc, errs := a.checkEdge(hc, op)
	if len(errs) > 0 {
		if audited {
			a.audit(hc, actor, target, outcomeOf(problemStatus(errs)))
		}
		writeEdgeProblem(a.api, hc, errs)
		return
	}
	if status, msg := a.authorize(hc, op, r, tok); status != 0 {
		if audited {
			a.audit(hc, actor, target, outcomeOf(status))
		}
		_ = huma.WriteErr(a.api, hc, status, msg)
		return
	}
	call := Call{Token: tok, Actor: actor, Store: a.cfg.Store.As(actor), RequestID: requestID(hc)}
	a.idempotent(hc, r, tok.ID, func(hc huma.Context) { next(huma.WithValue(hc, callKey{}, call)) })
	switch status := hc.Status(); {
	case status >= 400 && audited:
		a.audit(hc, actor, target, outcomeOf(status))
	case status < 300 && r.Payload:
		a.audit(hc, actor, target, audit.OutcomeOK)
	}
}

// identify returns the live token of the request, or answers it (401, 429
// for a client over its failed-authentication budget, 503) and returns
// false. The token is looked up first: a valid one is never refused,
// whatever its address's budget, and spends none of it; only a failure
// is charged, to the client's address.
func (a *API) identify(hc huma.Context) (admintoken.Token, bool) {
	tok, err := a.tokens.Authenticate(hc.Context(), bearer(hc.Header("Authorization")))
	switch {
	case err == nil:
		return tok, true
	case errors.Is(err, refusal.ErrUnauthenticated):
		if wait, limited := a.fails.Take(addrlimit.ClientAddr(hc.RemoteAddr()), time.Now()); limited {
			a.refusals.WithLabelValues("limited").Inc()
			hc.SetHeader("Retry-After", addrlimit.RetryAfter(wait))
			a.refuse(hc, refusal.New(refusal.Limited, "too many failed authentications from this address; retry later"))
			return admintoken.Token{}, false
		}
		a.refusals.WithLabelValues("unauthenticated").Inc()
		hc.SetHeader("WWW-Authenticate", `Bearer realm="sluice-admin"`)
		// One answer for the token's every sub-kind (unknown, revoked,
		// expired): a caller learns nothing about which tokens exist.
		a.refuse(hc, refusal.New(refusal.Unauthenticated, "missing, unknown, revoked or expired admin token"))
	default:
		a.log.ErrorContext(hc.Context(), "admin token look-up failed", slog.Any("error", err), slog.String("request_id", requestID(hc)))
		a.refuse(hc, refusal.New(refusal.Unavailable, "cannot check tokens now; retry"))
	}
	return admintoken.Token{}, false
}

// refuse answers r as the table says (refusals.go).
func (a *API) refuse(hc huma.Context, r *refusal.Error) {
	if r.Kind == refusal.Unavailable {
		hc.SetHeader("Retry-After", "1") // a look-up that failed: ask again
	}
	_ = huma.WriteErr(a.api, hc, AnswerOf(r).Status, r.Error())
}

// refused is r's status and words, as authorize returns them.
func refused(r *refusal.Error) (int, string) { return AnswerOf(r).Status, r.Error() }

// authorize applies the role and the scope: it returns 0, or the status
// and words of the refusal.
func (a *API) authorize(hc huma.Context, op *huma.Operation, r Route, tok admintoken.Token) (int, string) {
	if no := portalRefusal(op, r, tok); no != nil {
		return refused(no)
	}
	switch {
	case op.Method != http.MethodGet && tok.Role != admintoken.RoleOperate:
		return refused(refusal.New(refusal.Forbidden, "this token may only read (role read); acting needs role operate"))
	case tok.Scoped() && r.Scope == ScopeGlobal:
		return refused(refusal.New(refusal.Forbidden, "this route spans tenants: it needs a token with no tenant scope"))
	case tok.Scoped():
		return a.confine(hc, op, tok)
	}
	return 0, ""
}

// confine checks every path parameter of a tenant route against a scoped
// token's tenant: another tenant's id is 404 with the same words as an id
// that does not exist. A parameter with no owner registered refuses the
// request: a route cannot be reached by a scoped token until it is known
// whose its ids are.
func (a *API) confine(hc huma.Context, op *huma.Operation, tok admintoken.Token) (int, string) {
	for _, p := range op.Parameters {
		if p.In != "path" {
			continue
		}
		id := hc.Param(p.Name)
		owner, ok := a.owners[p.Name]
		if ok && owner.within != "" {
			if !hasPathParam(op, owner.within) {
				ok = false
			} else {
				continue // confined by its parent, checked in this loop
			}
		}
		if !ok {
			a.log.ErrorContext(hc.Context(), "admin route has a path parameter with no owner", slog.String("operation", op.OperationID), slog.String("param", p.Name))
			return http.StatusInternalServerError, fmt.Sprintf("route %s cannot be confined to a tenant yet", op.OperationID)
		}
		tenant, err := owner.find(hc.Context(), id)
		switch {
		case errors.Is(err, refusal.ErrNotFound) || (err == nil && tenant != tok.TenantID):
			return refused(refusal.NoSuch(owner.resource, id))
		case err != nil:
			a.log.ErrorContext(hc.Context(), "admin owner look-up failed", slog.Any("error", err), slog.String("request_id", requestID(hc)))
			return refused(refusal.New(refusal.Unavailable, "cannot check the tenant now; retry"))
		}
	}
	return 0, ""
}

func (a *API) audit(hc huma.Context, actor *audit.Actor, t audit.Target, outcome string) {
	if err := actor.Refused(hc.Context(), a.cfg.Pool, t, outcome); err != nil {
		a.log.ErrorContext(hc.Context(), "audit record lost", slog.Any("error", err), slog.String("action", t.Action), slog.String("outcome", outcome))
	}
}

func outcomeOf(status int) string {
	switch status {
	case http.StatusNotFound:
		return audit.OutcomeNotFound
	case http.StatusForbidden:
		return audit.OutcomeForbidden
	case http.StatusConflict:
		return audit.OutcomeConflict
	case http.StatusUnprocessableEntity, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return audit.OutcomeInvalid
	}
	return audit.OutcomeError
}

func hasPathParam(op *huma.Operation, name string) bool {
	for _, p := range op.Parameters {
		if p.In == "path" && p.Name == name {
			return true
		}
	}
	return false
}

func firstPathParam(hc huma.Context, op *huma.Operation) string {
	for _, p := range op.Parameters {
		if p.In == "path" {
			return hc.Param(p.Name)
		}
	}
	return ""
}

func bearer(header string) string {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
