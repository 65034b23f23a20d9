package endpoints

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The errors the deliveries' operations return for a person to act on; the
// admin API maps them to 404 and 422, the CLI prints them. The database's
// own text never reaches them.
var (
	// ErrNotFound: the id names nothing (or nothing the caller may see).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request itself is wrong.
	ErrInvalid = errors.New("invalid")
)

// NotFoundError names what was looked for.
type NotFoundError struct {
	Resource string // delivery, endpoint
	ID       string
}

func (e *NotFoundError) Error() string        { return fmt.Sprintf("no %s %s", e.Resource, e.ID) }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// InvalidError says which input is wrong and why.
type InvalidError struct {
	Field, Reason string
}

func (e *InvalidError) Error() string        { return e.Field + ": " + e.Reason }
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// canonical reports whether id is a uuid in its one spelling (lowercase
// 8-4-4-4-12), the only one an id of this package is stored and compared in.
func canonical(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}
