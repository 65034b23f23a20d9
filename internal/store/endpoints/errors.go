package endpoints

import (
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/refusal"
)

// Every change and read of this package refuses in internal/refusal's
// words (an id naming no endpoint, delivery or tenant is refusal.NotFound,
// a wrong URL, filter or cap refusal.Invalid with its field, a tenant at
// its cap of endpoints refusal.Conflict): the admin API and the CLI show
// them as they are. They never repeat a secret or a header's value.

func notFound(resource, id string) error { return refusal.NoSuch(resource, id) }

func invalid(field, format string, args ...any) error {
	return refusal.InvalidField(field, format, args...)
}

// checkID refuses an id that is no canonical uuid as unknown: it names
// nothing, and the database would answer with its own text.
func checkID(resource, id string) error {
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return notFound(resource, id)
	}
	return nil
}
