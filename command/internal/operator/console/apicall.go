package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
)

// apiError is an answer of the admin API that is no success (its problem
// detail): a refusal, whose kind and sub-kind its status and type say
// (Unwrap), or a failure.
type apiError struct {
	Status int    `json:"status"`
	Type   string `json:"type"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Errors []struct {
		Message  string `json:"message"`
		Location string `json:"location"`
	} `json:"errors"`
}

func (e *apiError) Error() string {
	msg := e.Detail
	if msg == "" {
		msg = e.Title
	}
	for _, fe := range e.Errors {
		msg += "; " + strings.TrimPrefix(fe.Location, "query.") + ": " + fe.Message
	}
	return msg
}

// Unwrap is the refusal the answer says (admin.RefusalOf), or nil for a
// failure (500, 502).
func (e *apiError) Unwrap() error {
	if r, ok := admin.RefusalOf(e.Status, e.Type); ok {
		return r
	}
	return nil
}

// recorder is the answer of an in-process call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

// call asks the admin API, in process, what the page needs, with token
// in the Authorization header and the browser's address as the peer (the
// failed-authentication limiter charges it): the API's role check, scope
// decision, tenant confinement and audit apply as to any client. path is
// under admin.Prefix; in, when not nil, is sent as JSON; out, when not
// nil, is filled from the answer. A refusal is an *apiError.
func (c *Console) call(ctx context.Context, from *http.Request, token, method, path string, q url.Values, in, out any) error {
	target := admin.Prefix + path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("console call %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return fmt.Errorf("console call %s %s: %w", method, path, err)
	}
	req.RemoteAddr = from.RemoteAddr
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if rid := from.Header.Get(admin.RequestIDHeader); rid != "" {
		req.Header.Set(admin.RequestIDHeader, rid)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{header: http.Header{}}
	c.cfg.API.ServeHTTP(rec, req)
	if rec.status >= 400 {
		e := &apiError{}
		if err := json.Unmarshal(rec.body.Bytes(), e); err != nil || e.Status == 0 {
			e.Status, e.Title = rec.status, http.StatusText(rec.status)
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(rec.body.Bytes(), out); err != nil {
		return fmt.Errorf("console call %s %s: answer: %w", method, path, err)
	}
	return nil
}
