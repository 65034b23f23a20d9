package endpoints

import "github.com/google/uuid"

// canonical reports whether id is a uuid in its one spelling (lowercase
// 8-4-4-4-12), the only one an id of this package is stored and compared in.
func canonical(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id
}
