package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/sluicehq/sluice/internal/telemetry"
)

// A line logged within a sampled span names its trace and span; a line
// logged without one, or within an unsampled one, names none.
func TestLogLinesNameTheirTrace(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(telemetry.NewLogHandler(slog.NewTextHandler(&buf, nil))).With(slog.String("component", "test"))
	sampled := sdktrace.NewTracerProvider().Tracer("test")
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample())).Tracer("test")

	ctx, span := sampled.Start(context.Background(), "request")
	log.InfoContext(ctx, "inside")
	span.End()
	log.InfoContext(ctx, "after its span ended")
	uctx, uspan := unsampled.Start(context.Background(), "unsampled")
	log.InfoContext(uctx, "unsampled")
	uspan.End()
	log.Info("outside")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := "trace_id=" + span.SpanContext().TraceID().String() + " span_id=" + span.SpanContext().SpanID().String()
	for i, named := range []bool{true, true, false, false} {
		if got := strings.Contains(lines[i], want); got != named {
			t.Errorf("line %q names the trace: %v, want %v", lines[i], got, named)
		}
		if !named && strings.Contains(lines[i], "trace_id") {
			t.Errorf("line %q names a trace", lines[i])
		}
	}
}
