// Package examples holds providers' published example payloads, trimmed, for
// tests: GitHub's from octokit/webhooks (payload-examples/api.github.com),
// Stripe's in the shape of API version 2025-03-31 (basil) as stripe-go's
// types describe it (examples_test.go holds them against those types).
// Tests replace the example ids with their own.
package examples

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed github/*.json stripe/*.json
var files embed.FS

// The ids the Stripe examples use, for Replace.
const (
	StripeInvoice       = "in_1RInvoiceExample"
	StripeCustomer      = "cus_SCustomerExample"
	StripePaymentIntent = "pi_3RPaymentIntentExample"
	StripeCharge        = "ch_3RChargeExample"
)

// Payload returns kind/name.json (e.g. "github", "installation.created"),
// with each old string of oldnew replaced by the new one after it.
func Payload(kind, name string, oldnew ...string) []byte {
	raw, ok := Find(kind, name, oldnew...)
	if !ok {
		panic(fmt.Sprintf("examples: no %s/%s.json", kind, name)) // a test asked for an example that is not here
	}
	return raw
}

// Find is Payload for a caller that does not know whether the example
// exists.
func Find(kind, name string, oldnew ...string) ([]byte, bool) {
	raw, err := files.ReadFile(kind + "/" + name + ".json")
	if err != nil {
		return nil, false
	}
	return []byte(strings.NewReplacer(oldnew...).Replace(string(raw))), true
}
