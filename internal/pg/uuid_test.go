package pg

import (
	"math/rand/v2"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

func TestUUIDStringsEncodeInBinary(t *testing.T) {
	m := pgtype.NewMap()
	registerUUIDStrings(m)
	const id = "695c57f7-ffbf-437b-ae74-2a9987f510f6"
	one, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want pgtype.UUID
	if err := want.Scan(id); err != nil {
		t.Fatal(err)
	}
	if string(one) != string(want.Bytes[:]) {
		t.Errorf("uuid %s encoded as %x", id, one)
	}
	if _, err := m.Encode(pgtype.UUIDArrayOID, pgtype.BinaryFormatCode, []string{id, id}, nil); err != nil {
		t.Errorf("uuid[] from []string: %v", err)
	}
	if _, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, "not-a-uuid", nil); err == nil {
		t.Error("a malformed uuid was encoded")
	}
	// Values pgx already encodes keep their plans.
	if _, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, want, nil); err != nil {
		t.Errorf("pgtype.UUID: %v", err)
	}
}

// parseUUID accepts and refuses what pgtype.UUID.Scan does, with the same
// bytes: random texts of the lengths it reads, from hex digits of both
// cases with now and then a character that is not one.
func TestParseUUIDIsPgtypes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const chars = "0123456789abcdefABCDEF-g {}"
	cases := []string{"", "695c57f7-ffbf-437b-ae74-2a9987f510f6", "695C57F7FFBF437BAE742A9987F510F6", "695c57f7xffbfx437bxae74x2a9987f510f6"}
	for range 20000 {
		n := []int{31, 32, 33, 35, 36, 37}[r.IntN(6)]
		b := make([]byte, n)
		for i := range b {
			if r.IntN(50) == 0 {
				b[i] = chars[r.IntN(len(chars))]
			} else {
				b[i] = chars[r.IntN(22)]
			}
		}
		cases = append(cases, string(b))
	}
	accepted := 0
	for _, s := range cases {
		got, err := parseUUID(s)
		var want pgtype.UUID
		wantErr := want.Scan(s)
		if (err != nil) != (wantErr != nil) || (err == nil && got != want.Bytes) {
			t.Fatalf("%q: got %x, %v; pgtype %x, %v", s, got, err, want.Bytes, wantErr)
		}
		if err == nil {
			accepted++
		}
	}
	if accepted < 1000 || accepted > len(cases)-1000 {
		t.Fatalf("%d of %d accepted: the cases do not exercise both sides", accepted, len(cases))
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = parseUUID("695c57f7-ffbf-437b-ae74-2a9987f510f6") }); n != 0 {
		t.Errorf("%v allocations per parse", n)
	}
}
