// Package installations projects GitHub App installation state (active,
// suspended, deleted) per installation, with the account it belongs to,
// from installation.created, .deleted, .suspend and .unsuspend events.
//
// Invariant: the stored state is the one of the greatest version, whatever
// the arrival order. GitHub signs no event time, so the version is
// (installation.updated_at, the order Sluice accepted the event): GitHub's
// own suspend and unsuspend examples share one updated_at, and their random
// X-GitHub-Delivery ids say nothing about which came first, while the inbox
// id the record carries does, and is the same on every replay (later,
// reconciliation can decide such ties by the installation's state at
// GitHub). updated_at is RFC 3339 text or unix seconds. deleted is final:
// uninstalling cannot be undone (installing again creates a new
// installation id, hence a new row for the same account).
package installations

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
)

//go:embed sql/project.sql
var projectSQL string

// Topic is the suffix of the topic this handler consumes.
const Topic = "github"

// Handler applies installation events.
type Handler struct{ consumers.Local }

type installationEvent struct {
	Action       string `json:"action"`
	Installation struct {
		ID      json.Number `json:"id"`
		Account struct {
			ID    json.Number `json:"id"`
			Login string      `json:"login"`
		} `json:"account"`
		UpdatedAt json.RawMessage `json:"updated_at"`
	} `json:"installation"`
}

var states = map[string]string{"created": "active", "unsuspend": "active", "suspend": "suspended", "deleted": "deleted"}

// Begin implements consumers.Handler: records share no state.
func (h Handler) Begin(tx pgx.Tx) consumers.Batch { return consumers.EachRecord(tx, h.apply) }

// apply applies one record.
func (Handler) apply(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	action, ok := strings.CutPrefix(ev.Type, "github.installation.")
	if !ok {
		return nil // other GitHub events have no installation effect
	}
	state, ok := states[action]
	if !ok {
		return nil // e.g. new_permissions_accepted: no state change
	}
	var e installationEvent
	if err := rec.Decode(ctx, tx, &e); err != nil {
		return err
	}
	inst := e.Installation
	if inst.ID == "" {
		return consumers.Permanentf("%s: no installation id", ev.Type)
	}
	at, err := updatedAt(inst.UpdatedAt)
	if err != nil {
		return consumers.Permanentf("%s: installation %s: %w", ev.Type, inst.ID, err)
	}
	_, err = tx.Exec(ctx, projectSQL, ev.SourceID, ev.SourceAccount, inst.ID.String(), ev.TenantID,
		inst.Account.ID.String(), inst.Account.Login, state, state == "deleted", at, ev.ID, rec.InboxID(),
		rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("project installation %s: %w", inst.ID, err)
	}
	return nil
}

// updatedAt reads installation.updated_at, which GitHub has sent both as an
// RFC 3339 string and as unix seconds.
func updatedAt(raw json.RawMessage) (time.Time, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("updated_at: %w", err)
		}
		return t.UTC(), nil
	}
	secs, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, fmt.Errorf("updated_at %q is neither RFC 3339 nor unix seconds", raw)
	}
	return time.Unix(secs, 0).UTC(), nil
}
