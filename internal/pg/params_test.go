package pg

import (
	"bytes"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Params writes the bytes pgx writes for the same values, NULLs and empty
// values included, so the server reads the same parameters either way.
func TestParamsAreWhatPgxEncodes(t *testing.T) {
	t.Parallel()
	m := pgtype.NewMap()
	registerUUIDStrings(m)
	s := "topic"
	n := int64(1) << 40
	at := time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.FixedZone("x", 3600))
	before := time.Date(1999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	var p Params
	cases := []struct {
		oid   uint32
		value any
		add   func()
	}{
		{pgtype.TextArrayOID, []string{"a", "", "é\x00"}, func() { p.Text([]string{"a", "", "é\x00"}) }},
		{pgtype.TextArrayOID, []string{"{}", ""}, func() { p.TextBytes([][]byte{[]byte("{}"), nil}) }},
		{pgtype.TextArrayOID, []string{"a", "", "{}é"}, func() {
			p.TextEach(3, func(i int, buf []byte) []byte { return append(buf, []string{"a", "", "{}é"}[i]...) })
		}},
		{pgtype.TextArrayOID, []string{}, func() { p.TextEach(0, nil) }},
		{pgtype.TextArrayOID, []*string{&s, nil}, func() { p.NullText([]*string{&s, nil}) }},
		{pgtype.TextArrayOID, []*string{&s}, func() { p.NullText([]*string{&s}) }},
		{pgtype.ByteaArrayOID, [][]byte{{1, 2}, {}, nil}, func() { p.Bytea([][]byte{{1, 2}, {}, nil}) }},
		{pgtype.UUIDArrayOID, []string{"8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10"}, func() {
			if err := p.UUID([]string{"8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10"}); err != nil {
				t.Fatal(err)
			}
		}},
		{pgtype.TimestamptzArrayOID, []time.Time{at, before}, func() { p.Timestamptz([]time.Time{at, before}) }},
		{pgtype.TimestamptzArrayOID, []*time.Time{&at, nil}, func() { p.NullTimestamptz([]*time.Time{&at, nil}) }},
		{pgtype.BoolArrayOID, []bool{true, false}, func() { p.Bool([]bool{true, false}) }},
		{pgtype.Int4ArrayOID, []int32{0, -1, 1 << 30}, func() { p.Int4([]int32{0, -1, 1 << 30}) }},
		{pgtype.Int8ArrayOID, []int64{0, -1, 1 << 60}, func() { p.Int8([]int64{0, -1, 1 << 60}) }},
		{pgtype.Int8ArrayOID, []*int64{&n, nil}, func() { p.NullInt8([]*int64{&n, nil}) }},
		{pgtype.Int8ArrayOID, []*int64{}, func() { p.NullInt8(nil) }},
		{pgtype.JSONBArrayOID, [][]byte{[]byte(`{"a":"é"}`), []byte(`[]`)}, func() { p.JSONB([][]byte{[]byte(`{"a":"é"}`), []byte(`[]`)}) }},
		{pgtype.BoolOID, true, func() { p.BoolScalar(true) }},
		{pgtype.TextOID, "refund", func() { p.TextScalar("refund") }},
		{pgtype.TextOID, "", func() { p.TextScalar("") }},
		{pgtype.Int8OID, int64(-100), func() { p.Int8Scalar(-100) }},
	}
	p.Reset()
	for _, tc := range cases {
		tc.add()
	}
	got, formats := p.Values()
	if len(got) != len(cases) {
		t.Fatalf("%d parameters, want %d", len(got), len(cases))
	}
	for i, tc := range cases {
		want, err := m.Encode(tc.oid, pgtype.BinaryFormatCode, tc.value, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[i], want) || formats[i] != pgtype.BinaryFormatCode {
			t.Errorf("parameter %d (%T):\n got %x\nwant %x", i, tc.value, got[i], want)
		}
	}
	p.Trim(1 << 20)
	if cap(p.buf) == 0 {
		t.Error("a small buffer was dropped")
	}
	p.Trim(16)
	if cap(p.buf) != 0 {
		t.Error("a buffer past the bound was kept")
	}
	if err := p.UUID([]string{"not-a-uuid"}); err == nil {
		t.Error("a malformed uuid was encoded")
	}
}

// An array is appended into room made for all of it at once: a consumer's
// statement of a few MiB grew element by element through dozens of
// buffers. Not parallel: it counts allocations.
func TestParamsGrowOncePerArray(t *testing.T) {
	vals := make([][]byte, 2000)
	for i := range vals {
		vals[i] = bytes.Repeat([]byte{'x'}, 500)
	}
	allocs := testing.AllocsPerRun(10, func() {
		var p Params
		p.JSONB(vals) // the buffer, once; the ends, once
	})
	if allocs > 2 {
		t.Errorf("a 1 MB array took %.0f allocations, want at most 2", allocs)
	}
}
