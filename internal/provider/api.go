package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/internal/refusal"
)

// A kind whose provider has an API Sluice can ask for what it missed
// implements Reconciler beside Provider. Reconciliation never writes an
// effect: what an API returns is handed to ingest as a delivery would be
// (Found), and enters the inbox and the outbox in one transaction, through
// the same door as a webhook.
type Reconciler interface {
	// CheckAPICredentials says why credentials (the kind's JSON document)
	// could never reach its API, or nil. Every way credentials enter asks
	// it, before they are sealed and stored.
	CheckAPICredentials(credentials []byte) error
	// OpenAPI returns the API client of one source. client carries the
	// timeouts and transport; the credentials were checked when stored.
	OpenAPI(credentials []byte, client *http.Client) (API, error)
}

// API is what a provider's API offers reconciliation. A method the
// provider does not offer returns ErrNotOffered.
//
// The listings go page by page: each page is handed to page, which enters
// it and saves its Cursor, before the next page is asked for; a listing
// begun again from that cursor (another run, after a kill or a spent
// budget) asks for nothing it already handed over. A page func that
// returns an error stops the listing with that error.
type API interface {
	// Events lists the events the provider recorded in the window, from
	// cursor ("" the start; the Cursor of the page last handled to resume), as the deliveries they would have been: their
	// real event ids, so a webhook that arrives later is a duplicate of the
	// recovered row. Only w.Types are asked for when w.Types is set.
	Events(ctx context.Context, w Window, cursor string, page func(Page) error) error
	// Redeliver asks the provider to deliver again what failed in the
	// window (the same delivery id: a redelivery that reaches ingest
	// after another copy is a duplicate), page by page from cursor, each
	// page's Asked being those delivery ids.
	Redeliver(ctx context.Context, w Window, cursor string, page func(Page) error) error
	// State fetches an object's canonical state as a delivery with a
	// deterministic synthetic event id and a version derived from the
	// object, so fetching one state twice enters it once.
	State(ctx context.Context, objectID string) (Found, error)
}

// Page is one page of a listing.
type Page struct {
	// Found are the page's events (Events).
	Found []Found
	// Asked are the deliveries the provider was asked to redeliver
	// (Redeliver), or would have been in a dry run.
	Asked []string
	// Listed is how many items the provider returned on the page, Found
	// and Asked or not.
	Listed int
	// Cursor is where the listing resumes after this page.
	Cursor string
	// Done: the listing ended with this page.
	Done bool
	// Reached is how far back in the window the listing has come (the
	// oldest item's time, for a provider that lists newest first), zero
	// when the provider does not say.
	Reached time.Time
}

var (
	// ErrNotOffered: the provider's API has no such operation.
	ErrNotOffered = errors.New("provider API does not offer this")
	// ErrNotFound: the provider knows no such object, or State cannot look
	// one of its kind up; reconciliation moves on to the next.
	ErrNotFound = refusal.Sub(refusal.NotFound, "provider_object", "provider API has no such object")
)

// PermissionError: the provider refused a request for want of a
// permission of the credentials (Stripe: a restricted key without it).
// Permission names it as the provider does, when it says.
type PermissionError struct {
	Op         string // what was asked, e.g. "list stripe invoice payments"
	Permission string
	Err        error
}

func (e *PermissionError) Error() string {
	if e.Permission == "" {
		return fmt.Sprintf("%s: the credentials lack a permission: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("%s: the credentials lack the %s permission", e.Op, e.Permission)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// Window is the time a reconciliation covers, [Since, Until).
type Window struct {
	Since, Until time.Time
	// Types, when set, are the provider event types worth listing (those
	// the catalogue handles); others would only be kept as unhandled.
	Types []string
	// DryRun: list and fetch, but ask the provider for nothing
	// (Redeliver returns what it would have asked for).
	DryRun bool
}

// Found is what an API returned, shaped as the delivery it stands for:
// the headers the kind's Scheme.Read looks at and the body. It is not
// signed; ingest trusts it because Sluice fetched it from the provider
// with the source's credentials.
type Found struct {
	Header http.Header
	Body   []byte
}

// Credentials is what every kind's API credentials document is, as stored
// (sealed) with a source: where its API is, and its kind's own checks.
type Credentials interface {
	// Base is where the API is when the document says ("": the provider's
	// own); it must be an http(s) URL.
	Base() string
	// Check refuses a document that could never reach the API, in words
	// that never quote it (they reach logs).
	Check() error
}

// ReadCredentials is the one reading of a kind's credentials document, for
// both methods of its Reconciler: strict JSON into a C (an unknown field
// refused), an http(s) base, then C's own Check. Its errors name the kind
// and show example, never the document: it holds secrets, and errors reach
// logs.
func ReadCredentials[C any, P interface {
	*C
	Credentials
}](k Kind, raw []byte, example string) (C, error) {
	var c C
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(P(&c)); err != nil {
		return c, fmt.Errorf("%s API credentials must be JSON: %s", k, example)
	}
	if base := P(&c).Base(); base != "" {
		if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return c, fmt.Errorf("%s API credentials: api_base must be an http(s) URL", k)
		}
	}
	return c, P(&c).Check()
}
