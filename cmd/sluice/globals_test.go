package main

import (
	"testing"
	"time"
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
