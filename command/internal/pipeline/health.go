package pipeline

import (
	"context"

	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/internal/listen"
)

// stagesHere names the stages this process runs, as the console's strip and
// the checks name them.
func (a *assembly) stagesHere() []string {
	var here []string
	for _, s := range []struct {
		name string
		runs bool
	}{{"ingest", a.cfg.Ingest}, {"relay", a.cfg.CDC}, {"consumers", a.cfg.Consume}, {"delivery", a.cfg.Consume && a.cfg.Deliver}} {
		if s.runs {
			here = append(here, s.name)
		}
	}
	return here
}

// stageHealth runs the process's checks once and gives each stage it runs
// the lines of its failing ones: a check of that stage, or of every stage.
func stageHealth(ctx context.Context, checks []listen.Check, stages []string) []console.StageHealth {
	errs := listen.Run(ctx, checks)
	out := make([]console.StageHealth, 0, len(stages))
	for _, stage := range stages {
		h := console.StageHealth{Stage: stage}
		for i, err := range errs {
			if err != nil && (checks[i].Stage == "" || checks[i].Stage == stage) {
				h.Failing = append(h.Failing, checks[i].Name+": "+err.Error())
			}
		}
		out = append(out, h)
	}
	return out
}
