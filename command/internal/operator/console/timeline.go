package console

import (
	"fmt"
	"net/url"
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
// delivery of it, its publication to Kafka (the relay's outbox -> Kafka
// hop), what each group applied and from which Kafka record, sends, dead
// letters and their replays, reconciliation, and its deliveries to
// endpoints; the steps with no time last, but for a publication, which
// follows the reception. operator: the publication links to the consumer
// group that read it (a tenant's view, to the delivery that did).
func timeline(t operate.Trail, operator bool) []step {
	var out []step
	for _, d := range t.Deliveries {
		s := step{At: d.ReceivedAt, What: receivedStep, State: d.Outcome}
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
	return withPublished(out, published(t, operator))
}

// receivedStep is the step of a delivery received from the provider.
const receivedStep = "Received from the provider"

// publication is where the relay published the event: a Kafka record the
// consumers read, as they recorded it, and when (the record's timestamp,
// which a delivery to an endpoint keeps; zero when none did).
type publication struct {
	topic     string
	partition int32
	offset    int64
	at        time.Time
	href      string
}

// publications are an event's Kafka records, each once.
type publications []publication

// add keeps p, unless its record is there already: then only what that
// one lacks (its time, its link).
func (ps *publications) add(p publication) {
	for i, q := range *ps {
		if q.topic == p.topic && q.partition == p.partition && q.offset == p.offset {
			if q.at.IsZero() {
				(*ps)[i].at = p.at
			}
			if q.href == "" {
				(*ps)[i].href = p.href
			}
			return
		}
	}
	*ps = append(*ps, p)
}

// published are the event's Kafka records, each once (a replayed dead
// letter or a rewound group reads the same record again), from what its
// consumers recorded: the fan-out's deliveries, the effects it caused
// with their position, the records set aside.
func published(t operate.Trail, operator bool) []step {
	var ps publications
	for _, d := range t.Destinations {
		if d.Topic == "" {
			continue
		}
		p := publication{topic: d.Topic, partition: d.Partition, offset: d.Offset, href: Prefix + "/deliveries/" + strconv.FormatInt(d.ID, 10)}
		if d.AcceptedAt != nil {
			p.at = *d.AcceptedAt
		}
		ps.add(p)
	}
	for _, e := range t.Effects {
		if a := e.Applied; e.ThisEvent && a.Topic != nil && a.Partition != nil && a.Offset != nil {
			ps.add(publication{topic: *a.Topic, partition: *a.Partition, offset: *a.Offset, href: groupPage(e.Group, operator)})
		}
	}
	for _, w := range t.Waiting {
		ps.add(publication{topic: w.Topic, partition: w.Partition, offset: w.Offset, href: groupPage(w.Group, operator)})
	}
	out := make([]step, 0, len(ps))
	for _, p := range ps {
		out = append(out, step{At: p.at, What: "Published to Kafka by the relay (outbox to Kafka)", State: "published", Href: p.href,
			Detail: fmt.Sprintf("topic %s, partition %d, offset %d", p.topic, p.partition, p.offset)})
	}
	return out
}

// groupPage is a consumer group's page, for an operator (a tenant sees no
// group): "" otherwise.
func groupPage(group string, operator bool) string {
	if !operator {
		return ""
	}
	return Prefix + "/consumer-groups/" + url.PathEscape(group)
}

// withPublished puts the publications in the timeline: by their time, or,
// with none kept, right after the event was first received (the relay publishes
// what ingest committed, so nothing of the event comes between).
func withPublished(out, pubs []step) []step {
	for _, p := range pubs {
		out = slices.Insert(out, publishedAt(out, p), p)
	}
	return out
}

func publishedAt(out []step, p step) int {
	if p.At.IsZero() {
		for j, s := range out {
			if s.What == receivedStep {
				return j + 1 // the first: what was accepted
			}
		}
		return 0
	}
	for j, s := range out {
		if s.At.IsZero() || s.At.After(p.At) {
			return j
		}
	}
	return len(out)
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
