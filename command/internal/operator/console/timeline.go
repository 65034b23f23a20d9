package console

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// step is one moment of an event's path: what happened, when (zero: its
// group keeps no time), the page that shows it and the state it left.
type step struct {
	At     time.Time
	What   string
	Detail string
	Href   string
	State  string
}

// timeline is an event's trail as one list in time order: received, each
// delivery of it, what each group applied and from which Kafka record,
// sends, dead letters and their replays, reconciliation, and its
// deliveries to endpoints; the steps with no time last.
func timeline(t operate.Trail) []step {
	var out []step
	for _, d := range t.Deliveries {
		s := step{At: d.ReceivedAt, What: "Received from the provider", State: d.Outcome}
		if d.Outcome == "conflict" {
			s.Href = Prefix + "/conflicts/" + operate.ConflictID(t.Event.ID, d.ReceivedAt)
		}
		out = append(out, s)
	}
	out = append(out, effectSteps(t.Effects)...)
	for _, s := range t.Sends {
		out = append(out, step{At: s.SentAt, What: "Sent by " + s.Group, Detail: "answered " + strconv.Itoa(s.Status)})
	}
	out = append(out, letterSteps(t.DeadLetters)...)
	for _, w := range t.Waiting {
		out = append(out, step{At: w.Since, What: "Set aside by " + w.Group, Detail: w.Reason, State: "waiting"})
	}
	for _, c := range t.Corrections {
		out = append(out, step{At: c.At, What: "Reconciliation run " + strconv.FormatInt(c.RunID, 10), State: c.Outcome,
			Href: Prefix + "/reconciliation?source_id=" + t.Event.SourceID})
	}
	out = append(out, destinationSteps(t.Destinations)...)
	slices.SortStableFunc(out, func(a, b step) int {
		switch {
		case a.At.IsZero() != b.At.IsZero():
			if a.At.IsZero() {
				return 1
			}
			return -1
		}
		return a.At.Compare(b.At)
	})
	return out
}

func effectSteps(effects []operate.Effect) []step {
	var out []step
	for _, e := range effects {
		s := step{What: "Applied by " + e.Group + ": " + words(e.Kind), State: e.State}
		if e.ProcessedAt != nil {
			s.At = *e.ProcessedAt
		}
		if p := e.Applied; p.Topic != nil && p.Partition != nil && p.Offset != nil {
			s.Detail = fmt.Sprintf("from Kafka: %s, partition %d, offset %d", *p.Topic, *p.Partition, *p.Offset)
		}
		if !e.ThisEvent {
			if s.Detail != "" {
				s.Detail += "; "
			}
			s.Detail += "caused by another event of the object"
			if e.InboxID != nil {
				s.Href = Prefix + "/events/" + strconv.FormatInt(*e.InboxID, 10)
			}
		}
		out = append(out, s)
	}
	return out
}

func letterSteps(letters []operate.DeadLetter) []step {
	var out []step
	for _, d := range letters {
		id := strconv.FormatInt(d.ID, 10)
		letter := step{At: d.LastFailedAt, What: "Dead letter " + id + " of " + d.Group, Detail: d.Reason, State: "dead"}
		if d.ReplayedAt == nil {
			letter.Href = Prefix + "/dead-letters/" + id + "/replay" // its replay, after a confirmation
		}
		out = append(out, letter)
		if d.ReplayedAt != nil {
			out = append(out, step{At: *d.ReplayedAt, What: "Dead letter " + id + " replayed", State: "replayed"})
		}
	}
	return out
}

// requests says how many requests a delivery made.
func requests(n int) string {
	if n == 1 {
		return "1 request"
	}
	return strconv.Itoa(n) + " requests"
}

func destinationSteps(deliveries []operate.EndpointDelivery) []step {
	var out []step
	for _, d := range deliveries {
		href := Prefix + "/deliveries/" + strconv.FormatInt(d.ID, 10)
		out = append(out, step{At: d.CreatedAt, What: "Delivery " + strconv.FormatInt(d.ID, 10) + " to endpoint " + shortID(d.EndpointID),
			Detail: requests(d.Attempts), State: string(d.State), Href: href})
		if d.DeliveredAt != nil {
			out = append(out, step{At: *d.DeliveredAt, What: "Delivered to endpoint " + shortID(d.EndpointID), State: "delivered", Href: href})
		}
	}
	return out
}
