package eventfilter_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/refusal"
)

// An expression that does not parse, names what is not there or yields
// no bool is refused at compile time, saying where and why.
func TestCompileRefusesWhatCannotFilter(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		``:                           "empty",
		`data.object.`:               "Syntax error",
		`amount > 1`:                 "undeclared reference to 'amount'",
		`1 + 2`:                      "yields int, not a bool",
		`subject.startsWith(1)`:      "found no matching overload",
		`type == "a" &&`:             "Syntax error",
		strings.Repeat("a", 3000):    "at most 2048",
		`[1].map(x, x)`:              "not a bool",
		`time > "2020-01-01"`:        "found no matching overload",
		`data.object.amount_paid +`:  "Syntax error",
		`size(body) > 1 ? 1 : false`: "found no matching overload", // branches of two types
	} {
		_, err := eventfilter.Compile(expr)
		if !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), want) {
			t.Errorf("Compile(%.40q) = %v, want an invalid refusal saying %q", expr, err, want)
		}
	}
}

// Verdicts: true takes, false declines, a missing field or a non-bool
// fails, and a runaway expression is stopped at the cost limit; none is an
// error the caller must stop for.
func TestEvalVerdicts(t *testing.T) {
	t.Parallel()
	vars := eventfilter.NewVars(eventfilter.Event{ID: "evt_1", Type: "stripe.invoice.paid", Subject: "in_1", Time: time.Unix(1743465600, 0),
		Body: []byte(`{"data":{"object":{"amount_paid":20000,"paid":true,"lines":{"data":[{"amount":6}]}}}}`)})
	list := "[1,2,3,4,5,6,7,8,9,10]"
	for expr, want := range map[string]eventfilter.Verdict{
		`data.object.amount_paid > 10000 && subject.startsWith("in_")`: eventfilter.Taken,
		`data.object.amount_paid == 20000`:                             eventfilter.Taken,
		`body.data.object.lines.data.exists(l, l.amount > 5)`:          eventfilter.Taken,
		`time == timestamp("2025-04-01T00:00:00Z")`:                    eventfilter.Taken,
		`data.object.amount_paid < 100`:                                eventfilter.Declined,
		`data.object.missing == 1`:                                     eventfilter.Failed,
		`data.object.amount_paid`:                                      eventfilter.Failed,
		`data.object.paid`:                                             eventfilter.Taken,
		list + ".all(a, " + list + ".all(b, " + list + ".all(c, " + list + ".all(d, " + list + ".all(e, a+b+c+d+e > 0)))))": eventfilter.OverCost,
	} {
		p, err := eventfilter.Compile(expr)
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got, err := p.Eval(vars); got != want {
			t.Errorf("%.60s: %s (%v), want %s", expr, got, err, want)
		}
	}
}

// A body that is not JSON, or longer than MaxBody, is null to the
// expression, and data is null when the body has none.
func TestBodyThatIsNotJSONIsNull(t *testing.T) {
	t.Parallel()
	p, err := eventfilter.Compile(`body == null && data == null && type == "x"`)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Eval(eventfilter.NewVars(eventfilter.Event{Type: "x", Body: []byte("not json")})); got != eventfilter.Taken {
		t.Fatalf("%s (%v), want taken", got, err)
	}
	big := []byte(`{"data":{"pad":"` + strings.Repeat("x", eventfilter.MaxBody) + `"}}`)
	if got, err := p.Eval(eventfilter.NewVars(eventfilter.Event{Type: "x", Body: big})); got != eventfilter.Taken {
		t.Fatalf("a body over MaxBody: %s (%v), want null (taken)", got, err)
	}
}
