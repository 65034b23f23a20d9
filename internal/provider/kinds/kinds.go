// Package kinds lists the provider kinds Sluice ships. Each kind is a
// folder below this one (internal/provider/kinds/<kind>, a fake of its API
// for tests beside it in <kind>/<kind>test); adding one is that folder and a
// line in Builtin.
package kinds

import (
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds/github"
	"github.com/sluicehq/sluice/internal/provider/kinds/hmac"
	"github.com/sluicehq/sluice/internal/provider/kinds/standardsigned"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe"
)

// Builtin returns a new registry of the shipped kinds. It panics only if
// the list below names a kind twice, which its test rules out.
func Builtin() *provider.Registry {
	r, err := provider.NewRegistry(
		stripe.Provider{},
		github.Provider{},
		standardsigned.Provider{},
		hmac.Provider{},
	)
	if err != nil {
		panic(err)
	}
	return r
}
