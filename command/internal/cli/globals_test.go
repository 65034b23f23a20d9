package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// --outbox-retention 0 keeps rows (cdc.Config.KeepOutbox); cdc.Config's own
// zero Retention means its default, so the command line never passes it.
func TestOutboxRetentionZeroKeepsRows(t *testing.T) {
	t.Parallel()
	g := &Globals{}
	for _, c := range []struct {
		flag      time.Duration
		keep      bool
		retention time.Duration
	}{
		{flag: 0, keep: true},
		{flag: 24 * time.Hour, retention: 24 * time.Hour},
		{flag: time.Minute, retention: time.Minute},
	} {
		cfg, err := g.pipelineConfig(RunFlags{OutboxRetention: c.flag})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CDCConfig.KeepOutbox != c.keep || cfg.CDCConfig.Retention != c.retention {
			t.Errorf("--outbox-retention %s: KeepOutbox %v Retention %s, want %v %s",
				c.flag, cfg.CDCConfig.KeepOutbox, cfg.CDCConfig.Retention, c.keep, c.retention)
		}
	}
	if _, err := g.pipelineConfig(RunFlags{OutboxRetention: -time.Hour}); err == nil {
		t.Error("--outbox-retention -1h accepted")
	}
}

// With no flag a process names no list of its own and takes the
// deployment's; the help names the list a first process stores, which is
// the catalogue's.
func TestResourceTypesFlagDefaultsToTheDeploymentsList(t *testing.T) {
	t.Parallel()
	var cli CLI
	parser, err := kong.New(&cli)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"migrate"}); err != nil {
		t.Fatal(err)
	}
	if got := cli.Globals.catalog().ResourceTypes; len(got) != 0 {
		t.Fatalf("--tenant-resource-types default %v, want none (the deployment's list)", got)
	}
	for _, f := range parser.Model.Flags {
		if f.Name == "tenant-resource-types" && !strings.Contains(f.Help, strings.Join(catalog.DefaultResourceTypes, ",")) {
			t.Fatalf("--tenant-resource-types help %q does not name the catalogue's list %v", f.Help, catalog.DefaultResourceTypes)
		}
	}
}

// --links-horizon (SLUICE_LINKS_HORIZON) left empty is the key horizon;
// given, it must be a positive duration, for `sluice lifecycle` as for the
// processes that run the manager.
func TestLinksHorizonFlagDefaultsToTheKeyHorizon(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want time.Duration // 0: refused
	}{
		{args: nil, want: 720 * time.Hour},
		{args: []string{"--links-horizon="}, want: 720 * time.Hour},
		{args: []string{"--key-horizon=1000h"}, want: 1000 * time.Hour},
		{args: []string{"--links-horizon=2160h"}, want: 2160 * time.Hour},
		{args: []string{"--links-horizon=1h"}, want: time.Hour},
		{args: []string{"--links-horizon=0s"}},
		{args: []string{"--links-horizon=-1h"}},
		{args: []string{"--links-horizon=90d"}},
	} {
		var cli CLI
		parser, err := kong.New(&cli)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := parser.Parse(append([]string{"lifecycle"}, c.args...)); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		cfg, err := cli.Lifecycle.lifecycle()
		if c.want == 0 {
			if err == nil {
				t.Errorf("%v accepted", c.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
		} else if got := cfg.WithDefaults().LinksHorizon; got != c.want {
			t.Errorf("%v: links horizon %s, want %s", c.args, got, c.want)
		}
	}
	g := &Globals{}
	if _, err := g.pipelineConfig(RunFlags{Horizons: Horizons{LinksHorizon: "0s"}}); err == nil {
		t.Error("serve with --links-horizon 0s accepted")
	}
	cfg, err := g.pipelineConfig(RunFlags{Horizons: Horizons{LinksHorizon: "2160h"}})
	if err != nil || cfg.Lifecycle.LinksHorizon != 2160*time.Hour {
		t.Errorf("serve with --links-horizon 2160h: links horizon %s, %v", cfg.Lifecycle.LinksHorizon, err)
	}
}
