package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Idempotency-Key on every create (an operation answering 201): the first
// request with a key claims it for its token; the same token sending the
// same key again with the same request (method, path, body) is answered
// what the first was, and nothing more is made. Another request under the
// key is 422; a key whose first request is still running is 409. An
// answer holding a secret shown once (Route.ShownOnce: an API key, an
// admin token) is never kept: sent again, the create is answered 409
// naming what it made. Keys are kept IdempotencyKeyTTL (the lifecycle
// manager deletes them after); a server error or a canceled request frees
// its key, so a retry runs. A process that dies between making something
// and recording its answer leaves its key in flight until it ages out: the
// create is never made twice, and the caller asks the list what was.

// IdempotencyHeader is the request header carrying a create's key.
const IdempotencyHeader = "Idempotency-Key"

// IdempotencyKeyTTL is how long a key is kept.
const IdempotencyKeyTTL = 24 * time.Hour

// keyPattern is what a key may be: printable ASCII, no space.
const keyPattern = `^[!-~]+$`

var (
	//go:embed sql/idempotency_claim.sql
	claimKeySQL string
	//go:embed sql/idempotency_taken.sql
	takenKeySQL string
	//go:embed sql/idempotency_complete.sql
	completeKeySQL string
	//go:embed sql/idempotency_release.sql
	releaseKeySQL string
)

// idempotencyParam is the header parameter every create declares.
func idempotencyParam() *huma.Param {
	return &huma.Param{Name: IdempotencyHeader, In: "header",
		Description: "Make the create safe to retry: sent again by the same token with the same request, it is answered as the first was " +
			"(409 naming what was made when that answer held a secret shown once); another request under the key is 422, a key still in flight 409. Kept 24 h.",
		Schema: &huma.Schema{Type: huma.TypeString, MinLength: ptr(1), MaxLength: ptr(input.MaxKey), Pattern: keyPattern,
			PatternDescription: "printable ASCII without spaces"}}
}

// isCreate reports whether a route makes something (it answers 201).
func isCreate(r Route) bool {
	return r.Op.Method == http.MethodPost && r.Op.DefaultStatus == http.StatusCreated
}

// keys is the store of Idempotency-Keys.
type keys struct{ pool *pgxpool.Pool }

// takenKey is what a taken key holds.
type takenKey struct {
	salt, digest          []byte
	done                  bool
	status                int
	contentType, location string
	body                  []byte
	resourceID            string
}

func digestOf(salt, request []byte) []byte {
	h := sha256.New()
	h.Write(salt)
	h.Write(request)
	return h.Sum(nil)
}

// claim takes key for tokenID's request, or returns what holds it.
func (k keys) claim(ctx context.Context, tokenID, key, operation string, request []byte) (bool, takenKey, error) {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	var claimed bool
	err := k.pool.QueryRow(ctx, claimKeySQL, tokenID, key, operation, salt, digestOf(salt, request), IdempotencyKeyTTL.Seconds()).Scan(&claimed)
	if err == nil {
		return true, takenKey{}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return false, takenKey{}, fmt.Errorf("claim idempotency key: %w", err)
	}
	var t takenKey
	err = k.pool.QueryRow(ctx, takenKeySQL, tokenID, key).Scan(&t.salt, &t.digest, &t.done, &t.status, &t.contentType, &t.location, &t.body, &t.resourceID)
	if errors.Is(err, pgx.ErrNoRows) { // freed since: the caller may try again
		return false, takenKey{}, errors.New("idempotency key freed while read")
	}
	if err != nil {
		return false, takenKey{}, fmt.Errorf("read idempotency key: %w", err)
	}
	return false, t, nil
}

func (k keys) complete(ctx context.Context, tokenID, key string, a answer) error {
	_, err := k.pool.Exec(ctx, completeKeySQL, tokenID, key, a.status, a.contentType, a.location, a.body, a.resourceID)
	return err
}

func (k keys) release(ctx context.Context, tokenID, key string) error {
	_, err := k.pool.Exec(ctx, releaseKeySQL, tokenID, key)
	return err
}

// answer is what a create answered, as kept.
type answer struct {
	status                int
	contentType, location string
	body                  []byte // nil: it held a secret shown once
	resourceID            string
}

// idempotent runs next, a create, under the request's Idempotency-Key
// (none: it just runs).
func (a *API) idempotent(hc huma.Context, r Route, tokenID string, next func(huma.Context)) {
	key := hc.Header(IdempotencyHeader)
	if key == "" || !isCreate(r) {
		next(hc)
		return
	}
	ctx := context.WithoutCancel(hc.Context())
	u := hc.URL()
	request := []byte(hc.Method() + " " + u.Path + "\n")
	if wb, ok := hc.(withBody); ok {
		request = append(request, wb.body...)
	}
	claimed, taken, err := a.keys.claim(ctx, tokenID, key, r.Op.OperationID, request)
	switch {
	case err != nil:
		a.log.ErrorContext(ctx, "admin idempotency key", slog.Any("error", err), slog.String("request_id", requestID(hc)))
		a.refuse(hc, refusal.New(refusal.Unavailable, "cannot check the Idempotency-Key now; retry"))
		return
	case !claimed:
		a.answerTaken(hc, r, request, taken)
		return
	}
	rec := &recorder{humaContext: hc}
	kept := false
	defer func() {
		if !kept { // a server error, a panic, a canceled request: free the key
			if err := a.keys.release(ctx, tokenID, key); err != nil {
				a.log.ErrorContext(ctx, "admin idempotency key not freed", slog.Any("error", err), slog.String("request_id", requestID(hc)))
			}
		}
	}()
	next(rec)
	status := hc.Status()
	if status >= 500 || status == http.StatusTooManyRequests {
		return
	}
	ans := answer{status: status, contentType: rec.contentType, location: rec.location, body: rec.buf.Bytes()}
	if r.ShownOnce && status < 300 {
		var made struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(ans.body, &made)
		ans.body, ans.resourceID = nil, made.ID
	}
	if err := a.keys.complete(ctx, tokenID, key, ans); err != nil {
		// The key stays in flight until it ages out: never made twice.
		a.log.ErrorContext(ctx, "admin idempotency answer not kept", slog.Any("error", err), slog.String("request_id", requestID(hc)))
	}
	kept = true
}

// answerTaken answers a request whose key is taken.
func (a *API) answerTaken(hc huma.Context, r Route, request []byte, t takenKey) {
	switch {
	case !bytes.Equal(digestOf(t.salt, request), t.digest):
		_ = huma.WriteErr(a.api, hc, http.StatusUnprocessableEntity, "validation failed", &huma.ErrorDetail{Location: "header." + IdempotencyHeader,
			Message: "was used by this token for another request (another operation, path or body); use a new key for a new request"})
	case !t.done:
		a.refuse(hc, refusal.New(refusal.Conflict, "a request with this Idempotency-Key is still in flight; retry once it ended"))
	case t.body == nil:
		if t.location != "" {
			hc.SetHeader("Location", t.location)
		}
		shown := refusal.New(refusal.Conflict, "created %s %s; shown once: what it held is not kept, so it cannot be shown again "+
			"(if it was lost, revoke it and make another)", r.Resource, t.resourceID)
		p := refusalProblem(shown, shown)
		p.ResourceID = t.resourceID
		writeHumaProblem(hc, p)
	default:
		if t.location != "" {
			hc.SetHeader("Location", t.location)
		}
		hc.SetHeader("Content-Type", t.contentType)
		hc.SetHeader("Idempotent-Replayed", "true")
		hc.SetStatus(t.status)
		_, _ = hc.BodyWriter().Write(t.body)
	}
}

// recorder keeps what a create answers while it is written.
type recorder struct {
	humaContext
	buf                   bytes.Buffer
	contentType, location string
}

func (r *recorder) SetHeader(name, value string) {
	switch http.CanonicalHeaderKey(name) {
	case "Content-Type":
		r.contentType = value
	case "Location":
		r.location = value
	}
	r.humaContext.SetHeader(name, value)
}

func (r *recorder) BodyWriter() io.Writer { return io.MultiWriter(r.humaContext.BodyWriter(), &r.buf) }

// Unwrap lets the adapter reach the request beneath (humagin.Unwrap).
func (r *recorder) Unwrap() huma.Context { return r.humaContext }
