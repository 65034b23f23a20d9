package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
)

// Problem is every error the API answers: RFC 9457 problem details
// (application/problem+json), with huma's list of what was wrong and the
// extension members below. It stands for huma.ErrorModel in the document
// (a type alias of the schema registry), and every huma error is turned
// into one before it is written (problems), so the document and the
// answers agree.
type Problem struct {
	Type     string              `json:"type,omitempty" format:"uri" default:"about:blank" doc:"A URI reference to documentation of the problem type."`
	Title    string              `json:"title,omitempty" doc:"The status's summary."`
	Status   int                 `json:"status,omitempty" doc:"The HTTP status."`
	Detail   string              `json:"detail,omitempty" doc:"What is wrong, for a person."`
	Instance string              `json:"instance,omitempty" format:"uri" doc:"A URI reference to this occurrence."`
	Errors   []*huma.ErrorDetail `json:"errors,omitempty" doc:"Each input at fault: its location (body.name, query.since, path.tenant_id) and why. value is only ever a path or query parameter's: a body field's is never repeated, it may be a secret."`
	// RequestID is the answer's X-Request-Id, also in the log line.
	RequestID string `json:"request_id,omitempty" doc:"The answer's X-Request-Id, also in the process's log line of the request."`
	// ResourceID: what a create made, answered again under its
	// Idempotency-Key when its answer held a secret shown once.
	ResourceID string `json:"resource_id,omitempty" doc:"A create sent again with its Idempotency-Key whose first answer held a secret shown once: the id it made."`
	// FailedID and Replayed: a dead-letter replay that failed again.
	// Kind and Code: the refusal the answer is (refusals.go), for a
	// client to switch on without parsing the type's URI.
	Kind     string  `json:"kind,omitempty" enum:"not_found,conflict,invalid,forbidden,unauthenticated,limited,unavailable" doc:"The kind of refusal (one per status; absent for a failure, 500, and for 405)."`
	Code     string  `json:"code,omitempty" doc:"The sub-kind of a refusal a client tells apart, also the last segment of type (https://sluice.dev/problems/<code>): builtin, quota, incompatible, already_replayed, dead_letter_expired, group_active, reconcile_busy (409); replay_failed, reconcile_window, no_api_credentials (422). Absent: the kind says all."`
	FailedID int64   `json:"failed_id,omitempty" doc:"Replay routes: the dead letter that failed again (it stays pending)."`
	Replayed []int64 `json:"replayed,omitempty" doc:"Filtered replay: the letters replayed before it stopped."`
}

func (p *Problem) Error() string  { return p.Detail }
func (p *Problem) GetStatus() int { return p.Status }

// ContentType makes a problem application/problem+json.
func (p *Problem) ContentType(ct string) string {
	if ct == "application/json" {
		return "application/problem+json"
	}
	return ct
}

func newProblem(status int, detail string) *Problem {
	return &Problem{Title: http.StatusText(status), Status: status, Detail: detail}
}

// problems is the transformer of every answer: a huma error becomes a
// Problem with the request's id, and no problem repeats a body's value.
func problems(hc huma.Context, _ string, v any) (any, error) {
	var p *Problem
	switch e := v.(type) {
	case *huma.ErrorModel:
		p = &Problem{Type: e.Type, Title: e.Title, Status: e.Status, Detail: e.Detail, Instance: e.Instance, Errors: e.Errors}
	case *Problem:
		p = e
	default:
		return v, nil
	}
	p.RequestID = requestID(hc)
	p.classify()
	for _, d := range p.Errors {
		if d != nil && (d.Location == "body" || strings.HasPrefix(d.Location, "body.") || strings.HasPrefix(d.Location, "body[")) {
			d.Value = nil
		}
	}
	return p, nil
}

var _ huma.Transformer = problems

// unrouted answers, as problems, what no operation serves on the admin
// listener: a path nothing serves (404), a method the path does not take
// (405, with Allow).
func (a *API) unrouted(e *gin.Engine) {
	e.NoRoute(func(c *gin.Context) {
		writeProblem(c, newProblem(http.StatusNotFound, fmt.Sprintf("nothing is served at %s; the operations are in %s", c.Request.URL.Path, OpenAPIPath)))
	})
	e.NoMethod(func(c *gin.Context) {
		if allow := a.allowed(c.Request.URL.Path); allow != "" {
			c.Header("Allow", allow) // the document's, not the router's guess
		}
		writeProblem(c, newProblem(http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", c.Request.URL.Path,
			c.Writer.Header().Get("Allow"), c.Request.Method)))
	})
}

// allowed lists the methods the document gives the path it names (see
// documentPath); "" for a path outside the document (gin's Allow stands).
func (a *API) allowed(path string) string {
	template := a.documentPath(path)
	if template == "" {
		return ""
	}
	item := a.api.OpenAPI().Paths[template]
	var methods []string
	for _, m := range []struct {
		name string
		op   *huma.Operation
	}{{http.MethodGet, item.Get}, {http.MethodPost, item.Post}, {http.MethodPut, item.Put}, {http.MethodDelete, item.Delete}, {http.MethodPatch, item.Patch}} {
		if m.op != nil {
			methods = append(methods, m.name)
		}
		if m.op != nil && m.name == http.MethodGet {
			methods = append(methods, http.MethodHead) // answered as the GET (adapter.go)
		}
	}
	return strings.Join(methods, ", ")
}

// documentPath is the document's path a request path names: of those
// matching it, the one with the most literal segments (/dead-letters/replay,
// not /dead-letters/{id}); "" when none does. The router may take another
// method's route for it (GET /dead-letters/replay reaches the GET of
// /dead-letters/{id}): the document's is the one that answers.
func (a *API) documentPath(path string) string {
	got := strings.Split(strings.Trim(path, "/"), "/")
	best, bestLiterals := "", -1
	for template := range a.api.OpenAPI().Paths {
		if n := literalsMatching(strings.Split(strings.Trim(template, "/"), "/"), got); n > bestLiterals {
			best, bestLiterals = template, n
		}
	}
	return best
}

// literalsMatching is how many of template's literal segments path has,
// or -1 when path does not match template.
func literalsMatching(template, path []string) int {
	if len(template) != len(path) {
		return -1
	}
	n := 0
	for i, seg := range template {
		switch {
		case strings.HasPrefix(seg, "{"):
		case seg == path[i]:
			n++
		default:
			return -1
		}
	}
	return n
}

// classify sets the problem's kind and code from its status and type.
func (p *Problem) classify() {
	if r, ok := RefusalOf(p.Status, p.Type); ok {
		p.Kind, p.Code = r.Kind.String(), r.Code
	}
}

// writeProblem writes p outside huma.
func writeProblem(c *gin.Context, p *Problem) {
	p.RequestID = c.GetString(requestIDKey)
	p.classify()
	c.Header("Content-Type", "application/problem+json")
	c.Status(p.Status)
	_ = json.NewEncoder(c.Writer).Encode(p)
}

// writeHumaProblem writes p as an operation's answer, past huma's errors
// (which would drop its extension members).
func writeHumaProblem(hc huma.Context, p *Problem) {
	p.RequestID = requestID(hc)
	p.classify()
	hc.SetHeader("Content-Type", "application/problem+json")
	hc.SetStatus(p.Status)
	_ = json.NewEncoder(hc.BodyWriter()).Encode(p)
}
