// Package standardsigned is the provider kind standard_webhooks: any
// sender that signs with Standard Webhooks, its deliveries carrying
// webhook-id, webhook-timestamp and webhook-signature
// (signature.StandardWebhooks, keyed by the base64 after whsec_; the scheme
// itself is internal/standardwebhooks); the event id is webhook-id, the
// rest is read from the body, and reconciliation fetches an object by the
// REST call its credentials configure.
package standardsigned

import (
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Kind is the Standard Webhooks kind.
const Kind provider.Kind = "standard_webhooks"

// Provider is the Standard Webhooks kind.
type Provider struct{}

func (Provider) Kind() provider.Kind { return Kind }

func (Provider) Open(settings []byte, tolerance time.Duration) (provider.Scheme, error) {
	if err := provider.NoSettings(Kind, settings); err != nil {
		return provider.Scheme{}, err
	}
	return provider.Scheme{Verifier: signature.StandardWebhooks{Tolerance: tolerance}, Read: read}, nil
}

// CheckSecret refuses a secret that is not whsec_ and base64: it could
// verify nothing.
func (Provider) CheckSecret(secret string) error {
	if !signature.ValidStandardSecret(secret) {
		return signature.ErrStandardSecret
	}
	return nil
}

func read(h http.Header, doc any) provider.Event {
	ev := provider.Event{ID: h.Get(signature.StandardIDHeader), ObjectIDPointer: "/data/id", TimePointer: "/timestamp", TimeFormat: "rfc3339"}
	ev.Type, _ = jsonptr.String(doc, "/type")
	return ev
}
