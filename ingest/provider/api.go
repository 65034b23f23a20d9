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
type API interface {
	// Events lists the events the provider recorded in the window, as
	// the deliveries they would have been: their real event ids, so a
	// webhook that arrives later is a duplicate of the recovered row.
	Events(ctx context.Context, w Window) ([]Found, error)
	// Redeliver asks the provider to deliver again what failed in the
	// window (the same delivery id: a redelivery that reaches ingest
	// after another copy is a duplicate), and returns those delivery ids.
	Redeliver(ctx context.Context, w Window) ([]string, error)
	// State fetches an object's canonical state as a delivery with a
	// deterministic synthetic event id and a version derived from the
	// object, so fetching one state twice enters it once.
	State(ctx context.Context, objectID string) (Found, error)
}

var (
	// ErrNotOffered: the provider's API has no such operation.
	ErrNotOffered = errors.New("provider API does not offer this")
	// ErrNotFound: the provider knows no such object, or State cannot look
	// one of its kind up; reconciliation moves on to the next.
	ErrNotFound = errors.New("provider API has no such object")
)

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

// DecodeCredentials reads a kind's credentials document strictly (unknown
// fields refused) into c, then checks its api_base, when set, is an http(s)
// URL. Errors name the kind and show example, never the document: it holds
// secrets, and errors reach logs.
func DecodeCredentials(k Kind, raw []byte, c interface{ Base() string }, example string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return fmt.Errorf("%s API credentials must be JSON: %s", k, example)
	}
	if base := c.Base(); base != "" {
		if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%s API credentials: api_base must be an http(s) URL", k)
		}
	}
	return nil
}
