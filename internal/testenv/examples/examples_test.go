package examples

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v82"
)

// jsonFields lists the JSON names of a stripe-go type's fields.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}

// The Stripe examples are in the shape stripe-go's current types describe
// (API version basil and later): a Charge has no invoice, an Invoice no
// payment_intent, charge or paid, and an InvoicePayment links the two.
func TestStripeExamplesHaveTheShapeOfStripeGo(t *testing.T) {
	t.Parallel()
	charge, invoice := jsonFields(reflect.TypeFor[stripe.Charge]()), jsonFields(reflect.TypeFor[stripe.Invoice]())
	if charge["invoice"] {
		t.Error("stripe-go's Charge has an invoice: the basil shape this package describes is not current")
	}
	for _, gone := range []string{"payment_intent", "charge", "paid"} {
		if invoice[gone] {
			t.Errorf("stripe-go's Invoice has %s", gone)
		}
	}

	decode := func(name string, into any) stripe.Event {
		t.Helper()
		var ev stripe.Event
		if err := json.Unmarshal(Payload("stripe", name), &ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ev.APIVersion == "" || string(ev.Type) != name {
			t.Errorf("%s: api_version %q, type %q", name, ev.APIVersion, ev.Type)
		}
		if err := json.Unmarshal(ev.Data.Raw, into); err != nil {
			t.Fatalf("%s: data.object: %v", name, err)
		}
		// Every field of the example is one stripe-go knows.
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(ev.Data.Raw, &fields)
		known := jsonFields(reflect.TypeOf(into).Elem())
		for f := range fields {
			if !known[f] {
				t.Errorf("%s: data.object.%s is not a field of %T", name, f, into)
			}
		}
		return ev
	}
	var ch stripe.Charge
	decode("charge.refunded", &ch)
	if ch.PaymentIntent == nil || ch.PaymentIntent.ID != StripePaymentIntent || !ch.Refunded || ch.AmountRefunded <= 0 {
		t.Errorf("charge: %+v", ch)
	}
	var pay stripe.InvoicePayment
	decode("invoice_payment.paid", &pay)
	if pay.Invoice == nil || pay.Invoice.ID != StripeInvoice || pay.Payment == nil || pay.Payment.PaymentIntent == nil ||
		pay.Payment.PaymentIntent.ID != StripePaymentIntent || pay.Status != "paid" {
		t.Errorf("invoice payment: %+v", pay)
	}
	var inv stripe.Invoice
	decode("invoice.paid", &inv)
	if inv.ID != StripeInvoice || inv.Customer == nil || inv.Customer.ID != StripeCustomer || inv.Status != stripe.InvoiceStatusPaid || inv.AmountPaid <= 0 {
		t.Errorf("invoice: %+v", inv)
	}
}
