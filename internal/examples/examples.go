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
	raw, err := files.ReadFile(kind + "/" + name + ".json")
	if err != nil {
		panic(fmt.Sprintf("examples: %v", err)) // a test asked for an example that is not here
	}
	return []byte(strings.NewReplacer(oldnew...).Replace(string(raw)))
}
