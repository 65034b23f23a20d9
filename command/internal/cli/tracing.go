package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/sluicehq/sluice/internal/telemetry"
)

// tracingWanted reads the standard OTEL_* environment: tracing is on when
// an exporter is named (OTEL_TRACES_EXPORTER other than "none") or an OTLP
// endpoint is set, and OTEL_SDK_DISABLED is not true. Otherwise it is off
// and no stage installs any instrumentation.
func tracingWanted(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	if exporter := getenv("OTEL_TRACES_EXPORTER"); exporter != "" {
		return exporter != "none"
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTracing builds the process's tracing from the OTEL_* environment:
// the exporter (spanExporter: OTLP over gRPC or HTTP, or the console), the
// sampler (OTEL_TRACES_SAMPLER, parent-based always-on by default), the
// batching (OTEL_BSP_*), and the resource (service.name "sluice" unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise). stop
// flushes what is buffered; call it once the stages stopped.
func startTracing(ctx context.Context, log *slog.Logger) (t telemetry.Tracing, stop func(), err error) {
	if !tracingWanted(os.Getenv) {
		return telemetry.Tracing{}, func() {}, nil
	}
	exporter, err := spanExporter(ctx, os.Getenv)
	if err != nil {
		return t, nil, err
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("sluice"), semconv.ServiceVersion(version())),
		resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithHost())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return t, nil, err
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	// The SDK reports failed exports only through otel's process-wide
	// error handler (the standard log package by default): the one global
	// set here, in main, so they reach the process's log. Stages never read
	// otel's globals; they take the provider from their Config.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("tracing: export failed", slog.Any("error", err))
	}))
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := provider.Shutdown(ctx); err != nil {
			log.Warn("tracing: flush at exit failed", slog.Any("error", err))
		}
	}
	log.Info("tracing on", slog.String("exporter", exporterName()))
	return telemetry.Tracing{Provider: provider, Propagator: propagation.TraceContext{}}, stop, nil
}

// spanExporter is the exporter OTEL_TRACES_EXPORTER names (otlp by
// default, or console), OTLP over the protocol
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL names
// (http/protobuf by default, or grpc), as the OpenTelemetry specification
// reads them. It names the three exporters it builds rather than taking
// contrib's autoexport, which also links every metrics and logs exporter
// (180 packages a build compiles for nothing).
func spanExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	switch name := exporterNameIn(getenv); name {
	case "otlp":
		protocol := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if protocol == "" {
			protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch protocol {
		case "", "http/protobuf":
			return otlptracehttp.New(ctx)
		case "grpc":
			return otlptracegrpc.New(ctx)
		default:
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q: want grpc or http/protobuf", protocol)
		}
	case "console":
		return stdouttrace.New()
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp, console or none", name)
	}
}

func exporterName() string { return exporterNameIn(os.Getenv) }

func exporterNameIn(getenv func(string) string) string {
	if e := getenv("OTEL_TRACES_EXPORTER"); e != "" {
		return e
	}
	return "otlp"
}

// version is the build's module version (a VCS pseudo-version for a build
// from a checkout).
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		return info.Main.Version
	}
	return "unknown"
}
