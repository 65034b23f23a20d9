// Package groups is the list of consumer groups a deployment runs: its
// effect groups (Sluice's built-in ones and a binary's own, chosen by the
// command line), the notifications dispatcher and the fan-out into
// tenants' endpoints. Each has a stable id (<prefix>.<name>, so Kafka UI
// and kafka-consumer-groups follow it across releases), the topics it
// reads, its dead-letter topic (<group>.dlq) and its handler. `sluice
// serve|consume` run them, and `sluice dlq|lag|replay` find them here, so
// the names live in one place.
package groups

import (
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/destinations"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/envelope"
)

// Group is one consumer group.
type Group struct {
	ID              string
	Topics          []string
	DeadLetterTopic string
	Handler         consumers.Handler
	// MaxAttempts, when set, is the group's own; zero: the deployment's.
	MaxAttempts int
}

// Effect is an effect group as the command line hands it over: its name
// (its id is <prefix>.<name>), the topic suffixes it reads and its handler.
type Effect struct {
	Name        string
	Topics      []string
	Handler     consumers.Handler
	MaxAttempts int
}

// Options configure the list.
type Options struct {
	// Effects are the deployment's effect groups, in order.
	Effects []Effect
	// Dispatch configures the notifications dispatcher; it runs only when
	// Dispatch.URL is set.
	Dispatch dispatch.Config
	// Destinations is the fan-out into tenants' endpoints' deliveries; it
	// reads every event topic: the effect groups', the notifications
	// topic, EventTopics (the catalogue's and tenants' shared topics), and
	// the destinations topic, where ingest publishes the events no handler
	// and no schema knows that an endpoint takes (no other group reads it).
	Destinations *destinations.Handler
	EventTopics  []string
	// EveryGroup lists the dispatcher even without Dispatch.URL, and the
	// fan-out without Destinations, to name every group and topic (lag,
	// rewinds, topic creation); their handlers then have nowhere to
	// deliver, so such a list is not for running.
	EveryGroup bool
}

// List returns the groups of a deployment, in a stable order: the effect
// groups, then the dispatcher and the fan-out.
func List(t envelope.Topics, o Options) []Group {
	group := func(name string, h consumers.Handler, topics ...string) Group {
		id := t.Resource(name)
		g := Group{ID: id, DeadLetterTopic: t.DeadLetter(id), Handler: h}
		for _, s := range topics {
			g.Topics = append(g.Topics, t.Resource(s))
		}
		return g
	}
	list := make([]Group, 0, len(o.Effects)+2)
	for _, e := range o.Effects {
		g := group(e.Name, e.Handler, e.Topics...)
		g.MaxAttempts = e.MaxAttempts
		list = append(list, g)
	}
	if o.Dispatch.URL != "" || o.EveryGroup {
		list = append(list, group("dispatch", dispatch.New(t.Prefix), dispatch.Topic))
	}
	if o.Destinations != nil || o.EveryGroup {
		list = append(list, fanOut(t, o, list))
	}
	return list
}

// fanOut is the destinations group: every topic an event of a tenant is
// published to, once, and the destinations topic, its alone.
func fanOut(t envelope.Topics, o Options, list []Group) Group {
	id := t.Resource("destinations")
	g := Group{ID: id, DeadLetterTopic: t.DeadLetter(id), Handler: o.Destinations}
	if o.Destinations == nil {
		g.Handler = destinations.New(nil, destinations.Telemetry{})
	}
	seen := map[string]bool{}
	add := func(topic string) {
		if !seen[topic] {
			seen[topic] = true
			g.Topics = append(g.Topics, topic)
		}
	}
	for _, other := range list {
		for _, topic := range other.Topics {
			add(topic)
		}
	}
	add(t.Resource(dispatch.Topic))
	for _, topic := range o.EventTopics {
		add(topic)
	}
	add(t.Destinations())
	return g
}

// Find returns the group with id.
func Find(t envelope.Topics, o Options, id string) (Group, bool) {
	for _, g := range List(t, o) {
		if g.ID == id {
			return g, true
		}
	}
	return Group{}, false
}

// Topics lists every topic the groups of effects read or write (dead
// letters and the notifications topic included) and the topics of extra
// suffixes (the catalogue's), once each, for creation at start.
func Topics(t envelope.Topics, effects []Effect, extra ...string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(topic string) {
		if !seen[topic] {
			seen[topic] = true
			out = append(out, topic)
		}
	}
	for _, g := range List(t, Options{Effects: effects, EveryGroup: true}) {
		for _, topic := range g.Topics {
			add(topic)
		}
		add(g.DeadLetterTopic)
	}
	for _, suffix := range extra {
		add(t.Resource(suffix))
	}
	return out
}
