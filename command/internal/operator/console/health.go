package console

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/cdc"
)

// StageHealth is a stage this process runs and what its readiness checks
// say of it now.
type StageHealth struct {
	// Stage is "ingest", "relay", "consumers" or "delivery".
	Stage string
	// Failing holds each failing check's line (its name, what is wrong and
	// what to do); none: the stage is ready here.
	Failing []string
}

// stageNames are the stages the overview's strip shows, in the order
// an event passes them.
var stageNames = []struct{ stage, title string }{
	{"ingest", "Ingest"}, {"relay", "Relay"}, {"consumers", "Consumers"}, {"delivery", "Delivery"},
}

// healthItem is one stage on the overview's strip: its state in a word
// and why.
type healthItem struct {
	Title string
	// State is "ready", "not ready", "failing" or "elsewhere" (another
	// process runs it and nothing seen from here says it is stuck).
	State string
	Why   string
	// Link is the console's page that says more ("": none).
	Link string
}

// healthStrip reads each stage's state from what this process's checks say
// of the stages it runs and from what every process leaves behind: the
// slot's streaming (relay), the groups' members and lag (consumers), the
// endpoints failing (delivery). A stage run elsewhere is judged by those
// alone.
func healthStrip(here []StageHealth, d overviewData) []healthItem {
	runs := make(map[string]StageHealth, len(here))
	for _, h := range here {
		runs[h.Stage] = h
	}
	items := make([]healthItem, 0, len(stageNames))
	for _, s := range stageNames {
		it := healthItem{Title: s.title, State: "elsewhere", Why: "not run by this process"}
		if h, ok := runs[s.stage]; ok {
			it.State, it.Why = "ready", "ready in this process"
			if len(h.Failing) > 0 {
				it.State, it.Why = "not ready", strings.Join(h.Failing, "; ")
			}
		}
		switch s.stage {
		case "ingest":
			it.Link = "/events"
			if it.State != "not ready" {
				it.Why += fmt.Sprintf("; %d events accepted in the last hour", d.Accepted)
			}
		case "relay":
			relayHealth(&it, d.Slot, d.SlotErr)
		case "consumers":
			it.Link = "/consumer-groups"
			consumersHealth(&it, d.Groups, d.GroupsErr)
		case "delivery":
			it.Link = "/destinations"
			if d.EndpointsFailing > 0 && it.State != "not ready" {
				it.State, it.Why = "failing", fmt.Sprintf("%d endpoints failing in the last hour", d.EndpointsFailing)
			}
		}
		items = append(items, it)
	}
	return items
}

// relayHealth judges the relay by its slot, whichever process streams it:
// a slot nobody streams keeps WAL and publishes nothing.
func relayHealth(it *healthItem, slot *cdc.SlotStatus, slotErr string) {
	switch {
	case it.State == "not ready":
	case slotErr != "":
		it.State, it.Why = "not ready", "the slot could not be read: "+slotErr
	case slot == nil:
		it.State, it.Why = "not ready", "no slot yet: no relay has started"
	case !slot.Active:
		it.State, it.Why = "not ready", fmt.Sprintf("no relay streams from slot %s; it retains %d bytes of WAL", slot.Slot, slot.LagBytes)
	default:
		it.State, it.Why = "ready", fmt.Sprintf("streaming from slot %s, %d bytes of WAL retained", slot.Slot, slot.LagBytes)
	}
}

// consumersHealth judges the consumers by their groups in Kafka: a group
// with records to read and no member is stuck, wherever it should run.
func consumersHealth(it *healthItem, groups []operate.GroupLag, groupsErr string) {
	if it.State == "not ready" {
		return
	}
	if groupsErr != "" {
		it.State, it.Why = "not ready", "the groups could not be read: "+groupsErr
		return
	}
	var stuck, behind []string
	var lag int64
	for _, g := range groups {
		if g.Lag > 0 {
			lag += g.Lag
			behind = append(behind, g.Group)
			if g.State != "Stable" && g.State != "PreparingRebalance" && g.State != "CompletingRebalance" {
				stuck = append(stuck, g.Group)
			}
		}
	}
	switch {
	case len(stuck) > 0:
		it.State, it.Why = "not ready", fmt.Sprintf("no member reads %s, with records to read", strings.Join(stuck, ", "))
	case len(behind) > 0:
		it.Why = fmt.Sprintf("%s; %d records behind in %d groups", it.Why, lag, len(behind))
	default:
		it.Why += "; no group behind"
	}
}

// health runs this process's stage checks, if the console was given them.
func (c *Console) health(ctx context.Context) []StageHealth {
	if c.cfg.Health == nil {
		return nil
	}
	return c.cfg.Health(ctx)
}
