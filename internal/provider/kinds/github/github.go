// Package github is the GitHub provider kind: deliveries signed with
// X-Hub-Signature-256 (signature.GitHub), no timestamp; the event id is
// X-GitHub-Delivery (kept across redeliveries) and the type is
// X-GitHub-Event, refined by the body's action.
package github

import (
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Kind is GitHub's kind.
const Kind provider.Kind = "github"

// MaxBody is GitHub's own payload cap: a GitHub source accepts whatever
// GitHub may send unless it says otherwise, because GitHub never redelivers
// on its own.
const MaxBody = 25 << 20

// Provider is the GitHub kind.
type Provider struct{}

func (Provider) Kind() provider.Kind { return Kind }

func (Provider) Open(settings []byte, _ time.Duration) (provider.Scheme, error) {
	if err := provider.NoSettings(Kind, settings); err != nil {
		return provider.Scheme{}, err
	}
	return provider.Scheme{Verifier: signature.GitHub{}, Read: read, MaxBody: MaxBody}, nil
}

func (Provider) CheckSecret(string) error { return nil }

func read(h http.Header, doc any) provider.Event {
	ev := provider.Event{ID: h.Get("X-GitHub-Delivery"), Type: h.Get("X-GitHub-Event")}
	if action, ok := jsonptr.String(doc, "/action"); ok && action != "" && ev.Type != "" {
		ev.Type += "." + action
	}
	return ev
}
