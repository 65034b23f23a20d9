package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/sluicehq/sluice/command/internal/pipeline"
)

// DoctorCmd checks what a deployment needs before its processes start: the
// same checks each stage runs at start and in readiness, read-only.
type DoctorCmd struct {
	RunFlags `embed:""`
	Output
	Stages []string `name:"stage" enum:"ingest,cdc,consume" default:"ingest,cdc,consume" sep:"," help:"Which stages' needs to check (ingest, cdc, consume), comma-separated."`
}

// errDoctorFound makes the command exit 1 once its lines are printed.
var errDoctorFound = reported{errors.New("doctor: some checks failed (see their lines)")}

func (c *DoctorCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	cfg, err := g.pipelineConfig(c.RunFlags)
	if err != nil {
		return err
	}
	for _, s := range c.Stages {
		switch s {
		case "ingest":
			cfg.Ingest = true
		case "cdc":
			cfg.CDC = true
		case "consume":
			cfg.Consume = true
		}
	}
	findings, err := pipeline.Doctor(ctx, cfg, log)
	if err != nil {
		return err
	}
	failed := 0
	for _, f := range findings {
		if f.Err != nil {
			failed++
		}
	}
	if err := c.report(findings); err != nil {
		return err
	}
	if failed > 0 {
		return errDoctorFound
	}
	return nil
}

type doctorLine struct {
	Check  string `json:"check"`
	Stage  string `json:"stage,omitempty"`
	OK     bool   `json:"ok"`
	Refuse bool   `json:"refuses_start"`
	Error  string `json:"error,omitempty"`
}

func (c *DoctorCmd) report(findings []pipeline.Finding) error {
	lines := make([]doctorLine, len(findings))
	for i, f := range findings {
		lines[i] = doctorLine{Check: f.Check.Name, Stage: f.Check.Stage, OK: f.Err == nil, Refuse: f.Refuse}
		if f.Err != nil {
			lines[i].Error = f.Err.Error()
		}
	}
	if c.Output.Output == "json" {
		ok := !slices.ContainsFunc(lines, func(l doctorLine) bool { return !l.OK })
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"ok": ok, "checks": lines})
	}
	t := newTable(os.Stdout, "RESULT\tSTAGE\tCHECK\tPROBLEM")
	for _, l := range lines {
		result := "ok"
		switch {
		case !l.OK && l.Refuse:
			result = "FAIL"
		case !l.OK:
			result = "WAIT"
		}
		t.row(result, l.Stage, l.Check, l.Error)
	}
	if err := t.flush(); err != nil {
		return fmt.Errorf("doctor: %w", err)
	}
	return nil
}
