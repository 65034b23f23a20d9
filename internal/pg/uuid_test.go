package pg

import (
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
