package eventtransform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/eventfilter/eventtransform"
	"github.com/sluicehq/sluice/internal/refusal"
)

var invoice = eventfilter.NewVars(eventfilter.Event{ID: "evt_1", Type: "stripe.invoice.paid", Subject: "in_1",
	Time: time.Unix(1743465600, 0), TenantID: "t1",
	Body: []byte(`{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1","amount_paid":20000,"currency":"eur",` +
		`"customer":"cus_9","lines":{"data":[{"amount":6},{"amount":7}]}}}}`)})

// What a transformation yields is exactly the JSON object it builds:
// projected fields, renamed keys, a wrapper around the body.
func TestApplyReshapesTheBody(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		// a projection
		`{"id": data.object.id, "amount_paid": data.object.amount_paid}`: `{"amount_paid":20000,"id":"in_1"}`,
		// renamed keys, with the envelope
		`{"invoice": data.object.id, "amount": data.object.amount_paid, "kind": type, "who": data.object.customer}`: `{"amount":20000,"invoice":"in_1","kind":"stripe.invoice.paid","who":"cus_9"}`,
		// a wrapper
		`{"event": {"id": id, "subject": subject}, "payload": body}`: `{"event":{"id":"evt_1","subject":"in_1"},"payload":{"data":{"object":{"amount_paid":20000,` +
			`"currency":"eur","customer":"cus_9","id":"in_1","lines":{"data":[{"amount":6},{"amount":7}]}}},"id":"evt_1","type":"invoice.paid"}}`,
		// lists built from the body
		`{"amounts": data.object.lines.data.map(l, l.amount)}`: `{"amounts":[6,7]}`,
	} {
		prg, err := eventtransform.Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		got, err := prg.Apply(invoice)
		if err != nil {
			t.Fatalf("Apply(%q): %v", expr, err)
		}
		if string(got) != want {
			t.Errorf("Apply(%q)\n got %s\nwant %s", expr, got, want)
		}
	}
}

// A transformation that does not parse, names what is not there or yields
// no map is refused at compile time, saying where and why.
func TestCompileRefusesWhatCannotTransform(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		``:                          "empty",
		`{"id": data.object.id`:     "Syntax error",
		`{"id": amount}`:            "undeclared reference to 'amount'",
		`1 + 2`:                     "yields int, not a map",
		`"text"`:                    "yields string, not a map",
		`[data.object.id]`:          "not a map",
		`type == "a"`:               "yields bool, not a map",
		strings.Repeat("a", 5000):   "at most 4096",
		`{"a": subject.size("x")}`:  "found no matching overload",
		`{"a": 1}.map(k, k)`:        "not a map",
		`{"a": id}["a"] + {"b": 1}`: "found no matching overload",
	} {
		_, err := eventtransform.Compile(expr)
		if !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%.40q) = %v, want an invalid refusal saying %q", expr, err, want)
		}
	}
}

// An application that cannot yield a JSON object fails with its class
// and reason, never a panic: a field the body lacks, a non-map value known
// only at evaluation, a runaway comprehension stopped at the cost limit,
// and an output past MaxOutput.
func TestApplyFailsWithItsReason(t *testing.T) {
	t.Parallel()
	big := eventfilter.NewVars(eventfilter.Event{ID: "evt_2", Type: "t", Body: []byte(`{"data":{"s":"` + strings.Repeat("x", 100_000) + `"}}`)})
	list := "[1,2,3,4,5,6,7,8,9,10]"
	for _, c := range []struct {
		expr  string
		vars  eventfilter.Vars
		class string
		says  string
	}{
		{`{"id": data.object.nothing}`, invoice, "failed", "no such key"},
		{`data.object.id`, invoice, "failed", "not a map"}, // dyn: known at evaluation
		{`data.object.lines`, invoice, "", ""},             // dyn, and a map: fine
		{`{"n": ` + list + `.map(a, ` + list + `.map(b, ` + list + `.map(c, ` + list + `.map(d, ` + list + `.map(e, a+b+c+d+e)))))}`,
			invoice, "over_cost", "cost limit"},
		{`{"a": data.s, "b": data.s, "c": data.s}`, big, "too_large", "at most 262144"},
		{`{1: id}`, invoice, "failed", "not JSON"},
	} {
		prg, err := eventtransform.Compile(c.expr)
		if err != nil {
			t.Fatalf("Compile(%.60q): %v", c.expr, err)
		}
		_, err = prg.Apply(c.vars)
		if c.class == "" {
			if err != nil {
				t.Errorf("Apply(%.60q) = %v, want a body", c.expr, err)
			}
			continue
		}
		var te *eventtransform.Error
		if !errors.As(err, &te) || te.Class != c.class || !strings.Contains(err.Error(), c.says) {
			t.Errorf("Apply(%.60q) = %v, want class %s saying %q", c.expr, err, c.class, c.says)
		}
	}
}
