// Package provider is the contract between ingest and a provider kind. A
// kind lives in one folder (internal/provider/kinds/<kind>): its signature
// scheme, how its events are read, its default body limit, its settings and
// its API client for reconciliation, behind Provider; the schemes themselves
// are in internal/provider/signature, the JSON pointers kinds read events
// with in internal/provider/jsonptr. Ingest, administration and the command line know kinds only
// through a Registry, a value their caller builds: nothing registers itself.
//
// The invariant: a source's kind is authenticated by its provider's scheme
// over the exact bytes received, before anything reads them; a kind the
// registry does not hold authenticates nothing (its deliveries are refused
// as if the source did not exist).
package provider

import (
	"fmt"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Kind names a provider kind. It is stored in sources.kind, prefixes every
// record's ce_type ("stripe.invoice.paid"), and names the catalogue folder
// holding its event types (schemas/<kind>/, each schema's x-sluice.kind).
// Once sources of a kind exist its name never changes: it is part of their
// rows, their records and their consumers' contracts.
type Kind string

// KindAPI is the tenant's own first-party events (POST /v1/events, API-key
// authenticated). It has no provider: nothing is signed and nothing is read
// from headers. A registry refuses it, and a source of it is made by
// `sluice apikey create`, never `sluice source create`.
const KindAPI Kind = "api"

// Provider is one kind of webhook sender.
type Provider interface {
	// Kind names the provider.
	Kind() Kind
	// Open applies one source's settings (the JSON stored with the source,
	// nil when it has none) and timestamp tolerance. Administration calls
	// it before storing a source, so settings that could never
	// authenticate or read an event are refused at the door.
	Open(settings []byte, tolerance time.Duration) (Scheme, error)
	// CheckSecret says why secret (as the provider hands it out) could
	// never authenticate a delivery, or nil. Every way a secret enters (a
	// new source, a rotation) asks it.
	CheckSecret(secret string) error
}

// Scheme is how deliveries to one source are authenticated and read.
type Scheme struct {
	signature.Verifier
	// Read extracts the event from an authenticated delivery: its headers
	// and its body parsed as JSON (numbers as json.Number).
	Read func(h http.Header, doc any) Event
	// MaxBody caps a body when the source sets no limit of its own; 0
	// means the instance's limit.
	MaxBody int64
	// Compared, when set, is the part of an event's body that decides
	// whether two copies under one event id are the same event (a
	// duplicate) or not (a conflict). Nil: the whole body, as JSON. A kind
	// whose provider renders one event differently per delivery (Stripe:
	// pending_webhooks, the API version of the endpoint or of the request
	// that listed it) compares what identifies the event instead, so the
	// webhook that arrives after reconciliation recovered it is a duplicate.
	Compared func(doc any) []byte
}

// Event is what a provider reads from a delivery: enough to build the event
// key, the resource key and the record headers. Where the object id and the
// event time are is a pointer, because the catalogue entry of the type may
// point elsewhere; ingest resolves them.
type Event struct {
	ID   string
	Type string
	// ObjectType is the provider's own name of the object, when it says
	// (Stripe's data.object.object).
	ObjectType string
	// APIVersion is the provider API version the body is written in, when
	// the body says (Stripe's api_version).
	APIVersion string
	// ObjectIDPointer and TimePointer are JSON pointers into the body;
	// TimeFormat is one of the schemas.Time* formats.
	ObjectIDPointer string
	TimePointer     string
	TimeFormat      string
}

// NoSettings is Open's check for kinds configured by their secret alone.
func NoSettings(k Kind, settings []byte) error {
	if len(settings) > 0 {
		return fmt.Errorf("a %s source takes no settings", k)
	}
	return nil
}
