package cli

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/internal/testenv"
)

// One trace follows a webhook through the whole pipeline: the ingest
// request, the group commit that stored it, the relay's produce, the
// credits consumer's processing of the record and its grant, the
// confirmation e-mail's produce, the dispatcher's processing of it, and the
// delivery's attempt to the deployment's endpoint, whose traceparent
// reaches the receiving service.
func TestOneTraceFollowsAWebhookToItsDispatch(t *testing.T) {
	t.Parallel()
	o := startObserved(t, func(*http.Request) int { return http.StatusOK })
	f := newTenantIn(t, o.store)
	s := testenv.RandomSuffix()
	body := invoicePaid("evt_trace_"+s, "in_trace_"+s, f.customer, 4200)
	if code := o.post(t, f.sourceID, body, map[string]string{"Stripe-Signature": stripeSignature(f.secret, body, time.Now())}); code != http.StatusAccepted {
		t.Fatalf("webhook answered %d, want 202", code)
	}
	testenv.Eventually(t, time.Minute, "the dispatcher to call the receiver", func() (bool, error) {
		return len(o.receiver.received()) > 0, nil
	})
	got := o.receiver.received()[0]
	sent := propagation.TraceContext{}.Extract(t.Context(), propagation.HeaderCarrier(got.Header))
	traceID := trace.SpanContextFromContext(sent).TraceID()
	if !traceID.IsValid() {
		t.Fatalf("the receiver got no valid traceparent: %q", got.Header.Get("traceparent"))
	}

	// Topic names hold the pipeline's prefix: spans named after a topic
	// are matched by their end.
	want := []struct{ name, kind string }{
		{"POST /v1/ingest/{source_id}", "server"},
		{"ingest commit", "internal"},
		{".invoices publish", "producer"},
		{".invoices process", "consumer"},
		{"credits grant", "internal"},
		{".notifications publish", "producer"},
		{".notifications process", "consumer"},
		{"delivery POST", "client"},
	}
	// Spans are exported as they end; the dispatcher's process span ends
	// after its transaction committed, a moment after the call.
	var inTrace []tracetest.SpanStub
	testenv.Eventually(t, 30*time.Second, "every span of the trace", func() (bool, error) {
		inTrace = inTrace[:0]
		for _, span := range o.spans.GetSpans() {
			if span.SpanContext.TraceID() == traceID {
				inTrace = append(inTrace, span)
			}
		}
		for _, w := range want {
			if find(inTrace, w.name, w.kind) == nil {
				var names []string
				for _, span := range inTrace {
					names = append(names, span.Name+" ("+span.SpanKind.String()+")")
				}
				return false, fmt.Errorf("no %s span %q in the trace, which holds %v", w.kind, w.name, names)
			}
		}
		return true, nil
	})
	// The receiver's traceparent names the delivery's attempt.
	call := find(inTrace, "delivery POST", "client")
	if sc := trace.SpanContextFromContext(sent); sc.SpanID() != call.SpanContext.SpanID() {
		t.Errorf("the receiver's traceparent names span %s, want the delivery's attempt %s", sc.SpanID(), call.SpanContext.SpanID())
	}
	// Each hop descends from the one before; the commit hangs off the
	// request beside the relay's produce, which continues the request; the
	// delivery's attempt, sent apart from the dispatcher's processing (which
	// only wrote the delivery), continues the intent's record.
	for i := 1; i < len(want); i++ {
		from := i - 1
		switch i {
		case 2:
			from = 0
		case len(want) - 1:
			from = i - 2
		}
		// Several groups read one topic (the dispatcher and the fan-out to
		// tenants' endpoints both read the notifications): any of them.
		child := find(inTrace, want[i].name, want[i].kind)
		if !descendsAny(inTrace, child, want[from].name, want[from].kind) {
			t.Errorf("%q does not descend from %q", child.Name, want[from].name)
		}
	}
}

// descendsAny says whether child descends from a span whose name ends with
// name, of kind.
func descendsAny(spans []tracetest.SpanStub, child *tracetest.SpanStub, name, kind string) bool {
	for i := range spans {
		if strings.HasSuffix(spans[i].Name, name) && spans[i].SpanKind.String() == kind && descends(spans, child, &spans[i]) {
			return true
		}
	}
	return false
}

// find returns the span whose name ends with name, of kind, or nil.
func find(spans []tracetest.SpanStub, name, kind string) *tracetest.SpanStub {
	for i := range spans {
		if strings.HasSuffix(spans[i].Name, name) && spans[i].SpanKind.String() == kind {
			return &spans[i]
		}
	}
	return nil
}

// descends reports whether child has ancestor among its parents in spans.
func descends(spans []tracetest.SpanStub, child, ancestor *tracetest.SpanStub) bool {
	byID := map[trace.SpanID]*tracetest.SpanStub{}
	for i := range spans {
		byID[spans[i].SpanContext.SpanID()] = &spans[i]
	}
	for s := child; s != nil; s = byID[s.Parent.SpanID()] {
		if s.Parent.SpanID() == ancestor.SpanContext.SpanID() {
			return true
		}
	}
	return false
}
