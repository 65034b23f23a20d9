package cli

// Operating consumer groups: dead letters (list, replay through the
// group's own handler), lag per group and partition, and rewinding a
// stopped group's offsets (consumers/offsets; dry run unless --execute).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/kafka"
)

// DLQCmd groups dead-letter commands, as the admin API's /dead-letters
// routes answer them (operate runs both).
type DLQCmd struct {
	List   DLQListCmd   `cmd:"" help:"List dead letters, newest first (no payloads)."`
	Show   DLQShowCmd   `cmd:"" help:"Show one dead letter with its record: key, headers, payload (audited); --summary: without it."`
	Count  DLQCountCmd  `cmd:"" help:"Count the pending dead letters a filter selects: what dlq replay with the same filter would replay now."`
	Replay DLQReplayCmd `cmd:"" help:"Apply dead letters again through their group's handler (once each): one by --id, or those a filter selects, oldest first."`
}

// deadLetterFilter selects dead letters as GET /dead-letters does.
type deadLetterFilter struct {
	Group  string    `name:"group" help:"Only this consumer group's (e.g. sluice.credits)."`
	Tenant string    `name:"tenant" help:"Only this tenant's." input:"uuid"`
	Reason string    `name:"reason" help:"Only letters whose reason contains this, case-insensitively." input:"max=255"`
	Since  time.Time `name:"since" format:"2006-01-02T15:04:05Z07:00" help:"Only letters that last failed from this time (RFC 3339)."`
	Until  time.Time `name:"until" format:"2006-01-02T15:04:05Z07:00" help:"Only letters that last failed before this time (RFC 3339)."`
}

func (f deadLetterFilter) operate() operate.DeadLetterFilter {
	return operate.DeadLetterFilter{Group: f.Group, TenantID: f.Tenant, Reason: f.Reason, Since: f.Since, Until: f.Until}
}

func (f deadLetterFilter) named() bool {
	return f.Group != "" || f.Tenant != "" || f.Reason != "" || !f.Since.IsZero() || !f.Until.IsZero()
}

// DLQListCmd lists dead letters.
type DLQListCmd struct {
	Output
	OperatePaging
	deadLetterFilter
	Replayed bool `name:"replayed" help:"Include dead letters already replayed."`
}

func (c *DLQListCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	f := c.operate()
	f.Replayed, f.After, f.Limit = c.Replayed, c.Cursor, int(c.Limit)
	page, err := op.DeadLetters(ctx, nil, f)
	if err != nil {
		return err
	}
	return printList(c.Output, page.Items, page.Next, "ID\tGROUP\tRECORD\tEVENT\tTYPE\tATTEMPTS\tLAST FAILED\tREPLAYED\tREASON", func(d operate.DeadLetter) []any {
		return []any{d.ID, d.Group, record(d), d.EventID, d.EventType, d.Attempts, d.LastFailedAt.UTC().Format(time.RFC3339),
			timeOrDash(d.ReplayedAt), oneLine(d.Reason)}
	})
}

func record(d operate.DeadLetter) string {
	return fmt.Sprintf("%s/%d@%d", d.Topic, d.Partition, d.Offset)
}

// DLQShowCmd shows one dead letter.
type DLQShowCmd struct {
	Output
	ID      int64 `arg:"" name:"dead-letter-id" help:"The dead letter's id (the ID dlq list prints)." input:"id"`
	Summary bool  `name:"summary" help:"Only what the list shows, without the record (not a payload read: not audited)."`
}

func (c *DLQShowCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	if c.Summary {
		d, err := op.DeadLetterSummary(ctx, nil, c.ID)
		if err != nil {
			return err
		}
		return printDeadLetter(c.Output, d, d)
	}
	d, err := op.DeadLetter(ctx, nil, c.ID)
	if err != nil {
		return err
	}
	if err := recordRead(ctx, pool, "dead_letter", strconv.FormatInt(c.ID, 10), d.TenantID); err != nil {
		return err
	}
	if err := printDeadLetter(c.Output, d, d.DeadLetter); err != nil || c.Output.Output == "json" {
		return err
	}
	fmt.Printf("\nkey: %s\n\nheaders:\n", shown(string(d.Key)))
	t := newTable(os.Stdout, "NAME\tVALUE")
	for _, name := range slices.Sorted(maps.Keys(d.Headers)) {
		t.row(name, d.Headers[name])
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Printf("\npayload: %s\n", d.Payload.State)
	if d.Payload.State == operate.PayloadKept {
		fmt.Println(shownMessage(string(d.Payload.Body)))
	}
	return nil
}

// printDeadLetter prints v as JSON, or d's fields one a line.
func printDeadLetter(o Output, v any, d operate.DeadLetter) error {
	return printOne(o, v, strconv.FormatInt(d.ID, 10), field{"group", d.Group}, field{"record", record(d)}, field{"tenant", d.TenantID},
		field{"event", d.EventID}, field{"type", d.EventType}, field{"inbox id", orDash(d.InboxID)}, field{"attempts", d.Attempts},
		field{"first failed", d.FirstFailedAt.UTC().Format(time.RFC3339)}, field{"last failed", d.LastFailedAt.UTC().Format(time.RFC3339)},
		field{"replayed", timeOrDash(d.ReplayedAt)}, field{"reason", d.Reason})
}

// DLQCountCmd counts the pending letters a filter selects.
type DLQCountCmd struct {
	Output
	deadLetterFilter
}

func (c *DLQCountCmd) Run(ctx context.Context, g *Globals) error {
	op, pool, err := g.operator(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := op.CountDeadLetters(ctx, nil, c.operate())
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]int64{"pending": n})
	}
	_, err = fmt.Println(n)
	return err
}

// DLQReplayCmd replays dead letters.
type DLQReplayCmd struct {
	Output
	ID int64 `name:"id" help:"Replay this dead letter; or name a filter instead (--group, --tenant, --reason, --since, --until), which replays every pending letter it selects." input:"id"`
	deadLetterFilter
	DispatchURL    string `name:"dispatch-url" env:"SLUICE_DISPATCH_URL" help:"The dispatcher's service, to replay its dead letters." input:"max=2048"`
	DispatchSecret string `name:"dispatch-secret" env:"SLUICE_DISPATCH_SECRET" envfile:"" help:"The dispatcher's signing secret, to replay its dead letters." input:"secret"`
}

// Validate asks for one letter or a filter, not both (a usage error):
// replaying every dead letter at once is never what is meant.
func (c *DLQReplayCmd) Validate() error {
	switch {
	case c.ID != 0 && c.named():
		return errors.New("--id replays one letter: give it alone, or a filter (--group, --tenant, --reason, --since, --until) without it")
	case c.ID == 0 && !c.named():
		return errors.New("give --id N, or a filter (--group, --tenant, --reason, --since, --until) selecting the letters to replay")
	}
	return nil
}

func (c *DLQReplayCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	dc := dispatch.Config{URL: c.DispatchURL, Secret: c.DispatchSecret}
	if err := dc.Validate(); err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	op := operate.New(pool, nil, g.operateConfig(groups.Options{Dispatch: dc}))
	if c.Group != "" && !slices.Contains(op.GroupNames(), c.Group) {
		return operate.NoSuchGroup(c.Group, op.GroupNames())
	}
	res, err := replayDeadLetters(ctx, op, c.ID, c.operate(), log)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"replayed": len(res.Replayed), "ids": res.Replayed})
	}
	_, err = fmt.Printf("replayed %d dead letter(s)\n", len(res.Replayed))
	return err
}

// replayDeadLetters replays letter id, or every pending letter f selects
// (operate's, shared with the admin API). It stops at the first failure:
// the letters after it stay pending, and the error (an
// *operate.ReplayError when a letter failed again) says how far it got.
func replayDeadLetters(ctx context.Context, op *operate.Operator, id int64, f operate.DeadLetterFilter, log *slog.Logger) (operate.ReplayResult, error) {
	if id != 0 {
		if err := op.ReplayDeadLetter(ctx, nil, id); err != nil {
			return operate.ReplayResult{Replayed: []int64{}}, err
		}
		log.Info("dead letter replayed", slog.Int64("id", id))
		return operate.ReplayResult{Replayed: []int64{id}}, nil
	}
	res, err := op.ReplayDeadLetters(ctx, nil, f, log)
	if res.Replayed == nil {
		res.Replayed = []int64{}
	}
	return res, err
}

// operateConfig is the operate layer's configuration: the deployment's
// topics and groups (checked when the command line was read) with their
// trails, o's dispatcher.
func (g *Globals) operateConfig(o groups.Options) operate.Config {
	o, _ = g.groups(o)
	set, _ := g.effects()
	return operate.Config{Topics: g.topics(), Groups: o, Trails: set.Trails()}
}

// LagCmd prints lag: one line per group, or per partition.
type LagCmd struct {
	Output
	Group      []string `name:"group" help:"Groups to show (default: every group Sluice runs, the dispatcher's included)."`
	Partitions bool     `name:"partitions" help:"One line per group and partition (committed, log start and end offsets) instead of one per group."`
}

func (c *LagCmd) Run(ctx context.Context, g *Globals) error {
	adm, done, err := g.admin()
	if err != nil {
		return err
	}
	defer done()
	lags, err := operate.New(nil, adm, g.operateConfig(groups.Options{})).ConsumerGroups(ctx, nil, c.Group...)
	if err != nil {
		return err
	}
	if !c.Partitions {
		return printGroupLag(os.Stdout, c.Output.Output, lags)
	}
	var rows []offsets.LagRow
	for _, l := range lags {
		if l.Lag < 0 {
			rows = append(rows, offsets.LagRow{Group: l.Group, State: l.State, Committed: -1, Lag: -1})
		}
		rows = append(rows, l.Partitions...)
	}
	return printLag(os.Stdout, c.Output.Output, rows)
}

// printGroupLag prints one line per group: its total lag and its slowest
// partition.
func printGroupLag(out io.Writer, format string, lags []operate.GroupLag) error {
	if format == "json" {
		type summary struct {
			Group      string          `json:"group"`
			State      string          `json:"state"`
			Lag        int64           `json:"lag"`
			Partitions int             `json:"partitions"`
			Slowest    *offsets.LagRow `json:"slowest,omitempty"`
		}
		out2 := make([]summary, 0, len(lags))
		for _, l := range lags {
			out2 = append(out2, summary{l.Group, l.State, l.Lag, len(l.Partitions), l.Slowest})
		}
		return json.NewEncoder(out).Encode(map[string]any{"items": out2})
	}
	t := newTable(out, "GROUP\tSTATE\tLAG\tPARTITIONS\tSLOWEST PARTITION")
	for _, l := range lags {
		slowest := "-"
		if s := l.Slowest; s != nil {
			slowest = fmt.Sprintf("%s/%d (lag %d)", s.Topic, s.Partition, s.Lag)
		}
		lag := fmt.Sprint(l.Lag)
		if l.Lag < 0 {
			lag = "-"
		}
		t.row(l.Group, l.State, lag, len(l.Partitions), slowest)
	}
	return t.flush()
}

func printLag(out io.Writer, format string, rows []offsets.LagRow) error {
	if format == "json" {
		if rows == nil {
			rows = []offsets.LagRow{}
		}
		return json.NewEncoder(out).Encode(map[string]any{"items": rows})
	}
	t := newTable(out, "GROUP\tSTATE\tTOPIC\tPARTITION\tCOMMITTED\tSTART\tEND\tLAG\tMEMBER")
	for _, r := range rows {
		t.row(r.Group, r.State, r.Topic, r.Partition, r.Committed, r.Start, r.End, r.Lag, r.Member)
	}
	return t.flush()
}

// ReplayCmd rewinds a stopped group.
type ReplayCmd struct {
	Output
	Group      string    `name:"group" required:"" help:"The consumer group to rewind (e.g. sluice.credits). It must have no active member."`
	ToEarliest bool      `name:"to-earliest" xor:"to" required:"" help:"Rewind to the oldest record Kafka still keeps."`
	ToLatest   bool      `name:"to-latest" xor:"to" required:"" help:"Skip to the end (nothing is applied again)."`
	ToTime     time.Time `name:"to-time" xor:"to" required:"" format:"2006-01-02T15:04:05Z07:00" help:"Rewind to the first record at or after this time (RFC 3339)."`
	ToOffset   *int64    `name:"to-offset" xor:"to" required:"" help:"Move every partition to this offset (kept within each partition's start and end)."`
	Execute    bool      `name:"execute" help:"Commit the new offsets; without it, print them only (dry run)."`
}

func (c *ReplayCmd) Run(ctx context.Context, g *Globals) error {
	adm, done, err := g.admin()
	if err != nil {
		return err
	}
	defer done()
	target := offsets.Target{Earliest: c.ToEarliest, Latest: c.ToLatest, Time: c.ToTime, Offset: -1}
	if c.ToOffset != nil {
		target.Offset = *c.ToOffset
	}
	moves, err := rewindGroup(ctx, adm, g.operateConfig(groups.Options{}), c.Group, target, c.Execute)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"group": c.Group, "executed": c.Execute, "moves": moves})
	}
	t := newTable(os.Stdout, "TOPIC\tPARTITION\tCURRENT\tNEW\tREREAD\tSKIPPED")
	for _, m := range moves {
		t.row(m.Topic, m.Partition, m.Current, m.New, m.Reread, m.Skipped)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if !c.Execute {
		fmt.Println("dry run: nothing committed; add --execute to move the group")
	}
	return nil
}

// rewindGroup rewinds one of Sluice's groups over the topics it reads
// (operate's, shared with the admin API).
func rewindGroup(ctx context.Context, adm *kadm.Client, cfg operate.Config, group string, target offsets.Target, execute bool) ([]operate.RewindMove, error) {
	return operate.New(nil, adm, cfg).Rewind(ctx, nil, group, target, execute)
}

func (g *Globals) admin() (*kadm.Client, func(), error) {
	cl, err := kafka.NewClient(g.kafka())
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		cut := 117
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}
