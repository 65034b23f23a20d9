package groups_test

import (
	"slices"
	"testing"

	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
)

// The destinations topic carries events no handler knows: the fan-out
// reads it, no other group does, and it is created at start.
func TestOnlyTheFanOutReadsTheDestinationsTopic(t *testing.T) {
	t.Parallel()
	topics := envelope.Topics{Prefix: "acme"}
	topic := topics.Destinations()
	if topic != "acme.destinations" {
		t.Fatalf("destinations topic %s, want acme.destinations", topic)
	}
	readers := 0
	for _, g := range groups.List(topics, groups.Options{EveryGroup: true}) {
		if !slices.Contains(g.Topics, topic) {
			continue
		}
		readers++
		if g.ID != "acme.destinations" {
			t.Errorf("group %s reads %s: only the fan-out may", g.ID, topic)
		}
	}
	if readers != 1 {
		t.Errorf("%d groups read %s, want the fan-out alone", readers, topic)
	}
	if !slices.Contains(groups.Topics(topics, nil), topic) {
		t.Errorf("%s is not among the topics created at start", topic)
	}
}
