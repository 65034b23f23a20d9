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

	"github.com/sluicehq/sluice/effect"
)

var (
	//go:embed sql/project.sql
	projectSQL string
	//go:embed sql/trail.sql
	trailSQL string
	//go:embed sql/erase.sql
	eraseSQL string
)

// Group projects installations. Other GitHub events share its topic and
// never reach it; new_permissions_accepted and the like change no state.
func Group() effect.Group {
	return effect.Group{
		Name: "installations",
		Types: []string{"github.installation.created", "github.installation.deleted", "github.installation.suspend",
			"github.installation.unsuspend"},
		Handler: effect.Each(apply),
		Tables:  []string{"github_installations"}, Trail: trailSQL, Erase: eraseSQL,
	}
}

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

// apply applies one record.
func apply(ctx context.Context, tx *effect.Tx, rec effect.Event[installationEvent]) error {
	state := states[strings.TrimPrefix(rec.Type, "github.installation.")]
	inst := rec.Payload.Installation
	if inst.ID == "" {
		return effect.Permanentf("%s: no installation id", rec.Type)
	}
	at, err := updatedAt(inst.UpdatedAt)
	if err != nil {
		return effect.Permanentf("%s: installation %s: %w", rec.Type, inst.ID, err)
	}
	_, err = effect.Project(ctx, tx, projectSQL, rec.SourceID, rec.SourceAccount, inst.ID.String(), rec.TenantID,
		inst.Account.ID.String(), inst.Account.Login, state, state == "deleted", at, rec.ID, inboxID(rec.Record),
		rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("project installation %s: %w", inst.ID, err)
	}
	return nil
}

// inboxID is the record's processing id as a nullable column value.
func inboxID(r effect.Record) *int64 {
	if r.InboxID == 0 {
		return nil
	}
	return &r.InboxID
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
