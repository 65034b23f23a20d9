package ingest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestCanonicalUUIDIsUUIDsOwn holds the in-place check to its definition:
// uuid.Parse accepts the id and String gives it back unchanged. The ids are
// uuids in every spelling uuid.Parse knows, with single characters changed.
func TestCanonicalUUIDIsUUIDsOwn(t *testing.T) {
	t.Parallel()
	want := func(id string) bool {
		u, err := uuid.Parse(id)
		return err == nil && u.String() == id
	}
	const alphabet = "0123456789abcdefABCDEFgz-{}:urn \x00\xff"
	rng := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 50_000 {
		u := uuid.New().String()
		var id string
		switch rng.IntN(5) {
		case 0:
			id = u
		case 1:
			id = strings.ToUpper(u)
		case 2:
			id = strings.ReplaceAll(u, "-", "")
		case 3:
			id = "{" + u + "}"
		default:
			id = "urn:uuid:" + u
		}
		if rng.IntN(2) == 0 {
			b := []byte(id)
			b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
			id = string(b)
		}
		if got := canonicalUUID(id); got != want(id) {
			t.Fatalf("canonicalUUID(%q) = %v, uuid says %v", id, got, want(id))
		} else if got {
			accepted++
		}
	}
	if accepted == 0 {
		t.Fatal("no id was canonical: the test draws nothing worth comparing")
	}
}
