// Package telemetry is what every stage needs to take part in a trace
// without owning one: the tracer provider and propagator a process was
// configured with (passed in each stage's Config, never read from a
// global), and a log handler that stamps log lines with the trace and span
// they were written in.
//
// Tracing off is the zero value: Enabled reports false, and stages then
// install no instrumentation at all (no middleware, no client hooks, no
// spans), so a process without OTEL_* settings pays nothing for it.
package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is a process's tracing: where spans go and how a trace context
// crosses process boundaries. The zero value is tracing off.
type Tracing struct {
	// Provider makes the tracers; nil turns tracing off.
	Provider trace.TracerProvider
	// Propagator reads and writes trace context in HTTP headers and Kafka
	// record headers. Default W3C Trace Context (traceparent, tracestate),
	// the record format's.
	Propagator propagation.TextMapPropagator
}

// Enabled reports whether spans are made.
func (t Tracing) Enabled() bool { return t.Provider != nil }

// Tracer is the named tracer, or nil when tracing is off.
func (t Tracing) Tracer(name string) trace.Tracer {
	if t.Provider == nil {
		return nil
	}
	return t.Provider.Tracer(name)
}

// Propagation is the propagator, W3C Trace Context unless set.
func (t Tracing) Propagation() propagation.TextMapPropagator {
	if t.Propagator == nil {
		return propagation.TraceContext{}
	}
	return t.Propagator
}

// Start starts a span with tracer, or returns ctx and a span that records
// nothing when tracer is nil, without allocating: the path every stage
// takes when tracing is off.
func Start(ctx context.Context, tracer trace.Tracer, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if tracer == nil {
		return ctx, noSpan
	}
	return tracer.Start(ctx, name, opts...)
}

// noSpan is the span of a context that has none: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())
