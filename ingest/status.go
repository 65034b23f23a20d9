package ingest

// Status is an inbox row's state, stored in inbox.status. Only a published
// row has an outbox row; the others are kept so an operator or a later
// handler can act on them, and a waiting row becomes published once its
// object is known (links.go).
type Status string

const (
	// StatusPublished: a known type that passed its schema, with an outbox
	// row on its resource's topic.
	StatusPublished Status = "published"
	// StatusUnhandled: a type no catalogue entry handles yet; kept so a
	// later handler can replay it.
	StatusUnhandled Status = "unhandled"
	// StatusQuarantined: a known type that failed its schema or lacks what
	// its entry points at; kept with the reason.
	StatusQuarantined Status = "quarantined"
	// StatusWaiting: a known type whose resource is named only through a
	// link not recorded yet; published once one is.
	StatusWaiting Status = "waiting"
)

// outcome is what a new row of the status is answered: the status's own
// name, except that a published row is "accepted".
func (s Status) outcome() Outcome {
	switch s {
	case StatusQuarantined:
		return OutcomeQuarantined
	case StatusUnhandled:
		return OutcomeUnhandled
	case StatusWaiting:
		return OutcomeWaiting
	default:
		return OutcomeAccepted
	}
}
