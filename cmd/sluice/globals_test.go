package main

import (
	"slices"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"github.com/sluicehq/sluice/internal/catalog"
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

// The flag's default vocabulary is the catalogue's: a process started with
// no flag creates the same shared topics the catalogue's defaults allow.
func TestResourceTypesFlagDefaultsToTheCataloguesVocabulary(t *testing.T) {
	t.Parallel()
	var cli CLI
	parser, err := kong.New(&cli)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse([]string{"migrate"}); err != nil {
		t.Fatal(err)
	}
	if got := cli.Globals.catalog().ResourceTypes; !slices.Equal(got, catalog.DefaultResourceTypes) {
		t.Fatalf("--tenant-resource-types default %v, catalog's %v", got, catalog.DefaultResourceTypes)
	}
}
