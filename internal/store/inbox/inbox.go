// Package inbox is the vocabulary of the inbox table: the states a stored
// delivery's row can be in (inbox.status). Ingest writes them, the
// operators' searches filter by them; both name them through Status, never
// through string literals, and the inbox_status_check constraint of the
// migrations holds the database to the same list.
//
// The invariant: only a published row has an outbox row; every other state
// is a row kept so an operator or a later handler can act on it.
package inbox

// Status is an inbox row's state, stored in inbox.status. Only a published
// row has an outbox row; the others are kept so an operator or a later
// handler can act on them, and a waiting row becomes published once its
// object is known (ingest's links).
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
