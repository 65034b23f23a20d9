package cli

import (
	"bufio"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Tracing is on only when the standard environment names an exporter or
// an OTLP endpoint, and OTEL_SDK_DISABLED does not turn it off.
func TestTracingFollowsTheOTELEnvironment(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_SERVICE_NAME": "sluice"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
	} {
		if got := tracingWanted(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: tracing %v, want %v", c.env, got, c.want)
		}
	}
}

// Spans leave over the OTLP protocol the standard environment names:
// HTTP (protobuf) unless OTEL_EXPORTER_OTLP_PROTOCOL or its traces variant
// says grpc; an exporter or protocol Sluice cannot build is refused at
// start.
func TestSpansLeaveOverTheOTLPProtocolTheEnvironmentNames(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want string // the first line the collector reads
	}{
		{map[string]string{}, "POST /v1/traces HTTP/1.1"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, "POST /v1/traces HTTP/1.1"},
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "PRI * HTTP/2.0"}, // HTTP/2's preface: gRPC
		{map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, "PRI * HTTP/2.0"},
	} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		first := make(chan string, 1)
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				first <- err.Error()
				return
			}
			defer conn.Close()
			line, _ := bufio.NewReader(conn).ReadString('\n')
			first <- strings.TrimSpace(line)
		}()
		for _, k := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_TRACES_EXPORTER"} {
			t.Setenv(k, c.env[k])
		}
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000") // the collector never answers: each export gives up soon
		exporter, err := spanExporter(context.Background(), os.Getenv)
		if err != nil {
			t.Fatalf("%v: %v", c.env, err)
		}
		provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
		_, span := provider.Tracer("test").Start(context.Background(), "one")
		go span.End() // the syncer exports it now, and retries while the collector does not answer
		select {
		case got := <-first:
			if got != c.want {
				t.Errorf("%v: the collector read %q, want %q", c.env, got, c.want)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%v: no connection to the collector", c.env)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = provider.Shutdown(ctx)
		cancel()
		ln.Close()
	}
	for _, env := range []map[string]string{{"OTEL_TRACES_EXPORTER": "zipkin"}, {"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}} {
		if _, err := spanExporter(t.Context(), func(k string) string { return env[k] }); err == nil {
			t.Errorf("%v: an exporter, want a refusal", env)
		}
	}
}
