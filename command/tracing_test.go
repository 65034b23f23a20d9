package command

import "testing"

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
