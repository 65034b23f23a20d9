package cli

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// A setting's default is the stage's: its Config.WithDefaults, which is
// what a program built on the stage gets from the zero value. A flag
// states the same default for --help and the configuration page, and this
// test holds it to the stage's: every setting that both a flag's default
// and the stage's WithDefaults give a value has one value. A default only
// the flag states (no stage decides it) is the flag's alone.
func TestFlagDefaultsAreTheStagesOwn(t *testing.T) {
	t.Parallel()
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("sluice"), kong.Exit(func(int) { t.Fatal("kong exited") }))
	if err != nil {
		t.Fatal(err)
	}
	tagDefaults(t, parser, "serve")
	cfg, err := cli.Globals.pipelineConfig(cli.Serve.RunFlags)
	if err != nil {
		t.Fatal(err)
	}
	types, err := catalog.Config{}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stage     string
		flags, by any
	}{
		{"cdc.Config", cfg.CDCConfig, cdc.Config{}.WithDefaults()},
		{"ingest.Config", cfg.IngestConfig, ingest.Config{}.WithDefaults()},
		{"kafka.TopicSpec", cfg.TopicSpec, kafka.TopicSpec{}.WithDefaults()},
		{"lifecycle.Config", cfg.Lifecycle, lifecycle.Config{}.WithDefaults()},
		{"reconcile.Config", cfg.Reconcile, reconcile.Config{}.WithDefaults()},
		{"delivery.Config", cfg.Delivery, delivery.Config{}.WithDefaults()},
		{"endpoints.Limits", cfg.EndpointLimits, endpoints.Limits{}.WithDefaults()},
		{"catalog.Config", cfg.Catalog, types},
		{"pipeline.Config", cfg, pipeline.Config{}.WithDefaults()},
		{"consumers.Config", cfg.Consumer, consumers.Config{}.WithDefaults()},
	} {
		both, differ := disagreements(c.stage, reflect.ValueOf(c.flags), reflect.ValueOf(c.by))
		for _, d := range differ {
			t.Error(d)
		}
		if both == 0 {
			t.Errorf("%s: no setting has a default from both a flag and the stage: the comparison reads nothing", c.stage)
		}
	}
}

// tagDefaults sets every flag of the global options and of command to its
// default tag's value, whatever the environment holds (kong's Reset reads
// the environment first).
func tagDefaults(t *testing.T, parser *kong.Kong, command string) {
	t.Helper()
	var node *kong.Node
	for _, n := range parser.Model.Children {
		if n.Name == command {
			node = n
		}
	}
	if node == nil {
		t.Fatalf("no command %s", command)
	}
	for _, flags := range append([][]*kong.Flag{parser.Model.Flags}, node.Flags) {
		for _, f := range flags {
			if !f.HasDefault {
				continue
			}
			f.Target.Set(reflect.Zero(f.Target.Type()))
			if err := f.Parse(kong.ScanFromTokens(kong.Token{Type: kong.FlagValueToken, Value: f.Default}), f.Target); err != nil {
				t.Fatalf("--%s's default %q: %v", f.Name, f.Default, err)
			}
		}
	}
}

// disagreements counts the settings, field by field, that flags and by
// both give a value, and lists those they give different ones.
func disagreements(path string, flags, by reflect.Value) (both int, differ []string) {
	if flags.Kind() == reflect.Struct && flags.Type() != reflect.TypeFor[time.Time]() {
		for i := range flags.NumField() {
			if flags.Type().Field(i).IsExported() {
				n, d := disagreements(path+"."+flags.Type().Field(i).Name, flags.Field(i), by.Field(i))
				both, differ = both+n, append(differ, d...)
			}
		}
		return both, differ
	}
	switch flags.Kind() {
	case reflect.Func, reflect.Pointer, reflect.Interface, reflect.Map, reflect.Chan:
		return 0, nil // a part, not a setting
	}
	if flags.IsZero() || by.IsZero() {
		return 0, nil
	}
	if !reflect.DeepEqual(flags.Interface(), by.Interface()) {
		differ = []string{fmt.Sprintf("%s: the flags' default is %v, the stage's %v: make the flag's default tag the stage's", path, flags.Interface(), by.Interface())}
	}
	return 1, differ
}
