// Package receiver is a tenant's endpoint for Sluice's deliveries, in Go
// with Svix's Standard Webhooks library: it verifies the signature over the
// body exactly as received, then processes each webhook-id once.
package receiver

import (
	"io"
	"net/http"
	"sync"

	svix "github.com/svix/svix-webhooks/go"
)

// Receiver is an http.Handler for one endpoint.
type Receiver struct {
	Webhook *svix.Webhook // svix.NewWebhook(secret): the endpoint's whsec_... secret
	// Process applies one event; an error answers 500, and Sluice retries.
	Process func(id, eventType string, body []byte) error
	// seen: a real receiver records webhook-ids in its database, in the
	// transaction of the effect, for as long as Sluice may send them again.
	seen sync.Map
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
	if err != nil || rc.Webhook.Verify(body, r.Header) != nil {
		w.WriteHeader(http.StatusBadRequest) // not from Sluice, or altered on the way
		return
	}
	id := r.Header.Get("webhook-id")
	if _, again := rc.seen.LoadOrStore(id, true); again {
		w.WriteHeader(http.StatusNoContent) // a retry of what was processed: nothing to do
		return
	}
	if err := rc.Process(id, r.Header.Get("ce-type"), body); err != nil {
		rc.seen.Delete(id)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
