// Package providers lists the provider kinds Sluice ships. Each kind is a
// folder below this one; adding one is that folder and a line in Builtin.
package providers

import (
	"github.com/sluicehq/sluice/ingest/provider"
	"github.com/sluicehq/sluice/ingest/providers/github"
	"github.com/sluicehq/sluice/ingest/providers/hmac"
	"github.com/sluicehq/sluice/ingest/providers/standardwebhooks"
	"github.com/sluicehq/sluice/ingest/providers/stripe"
)

// Builtin returns a new registry of the shipped kinds. It panics only if
// the list below names a kind twice, which its test rules out.
func Builtin() *provider.Registry {
	r, err := provider.NewRegistry(
		stripe.Provider{},
		github.Provider{},
		standardwebhooks.Provider{},
		hmac.Provider{},
	)
	if err != nil {
		panic(err)
	}
	return r
}
