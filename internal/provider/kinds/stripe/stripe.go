// Package stripe is the Stripe provider kind: deliveries signed with
// Stripe-Signature (signature.Stripe, keyed by the whsec_ string as-is),
// events read from the body (id, type, created, data.object).
package stripe

import (
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Kind is Stripe's kind.
const Kind provider.Kind = "stripe"

// Provider is the Stripe kind.
type Provider struct{}

func (Provider) Kind() provider.Kind { return Kind }

func (Provider) Open(settings []byte, tolerance time.Duration) (provider.Scheme, error) {
	if err := provider.NoSettings(Kind, settings); err != nil {
		return provider.Scheme{}, err
	}
	return provider.Scheme{Verifier: signature.NewStripe(tolerance), Read: read, Compared: compared}, nil
}

func (Provider) CheckSecret(string) error { return nil }

func read(_ http.Header, doc any) provider.Event {
	ev := provider.Event{ObjectIDPointer: "/data/object/id", TimePointer: "/created", TimeFormat: "unix"}
	ev.ID, _ = jsonptr.String(doc, "/id")
	ev.Type, _ = jsonptr.String(doc, "/type")
	ev.ObjectType, _ = jsonptr.String(doc, "/data/object/object")
	ev.APIVersion, _ = jsonptr.String(doc, "/api_version")
	return ev
}
