package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// LogHandler adds trace_id and span_id to every record logged with a
// context that holds a span of a sampled trace (slog's *Context methods,
// LogAttrs), so a log line leads to its trace and a trace to its log lines.
// Sampled rather than recording: a line written just after its span ended
// (a record parked once Kafka answered) still belongs to a trace the
// backend holds, and an unsampled trace is nowhere to be found.
type LogHandler struct{ slog.Handler }

// NewLogHandler wraps h.
func NewLogHandler(h slog.Handler) LogHandler { return LogHandler{Handler: h} }

// Handle implements slog.Handler.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return LogHandler{Handler: h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h LogHandler) WithGroup(name string) slog.Handler {
	return LogHandler{Handler: h.Handler.WithGroup(name)}
}
