package pg

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgtype"
)

// registerUUIDStrings lets uuid and uuid[] parameters given as Go strings
// (tenant, source and workspace ids are strings throughout Sluice) be sent
// in binary. pgx's own codec encodes strings as uuids only in text, and it
// finds that out by failing the binary attempt first with an error that
// formats the whole value, a cost that grows with a batch's id arrays.
func registerUUIDStrings(m *pgtype.Map) {
	uuidType := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(uuidType)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: uuidType}})
}

type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		if _, ok := value.(string); ok {
			return encodeUUIDString{}
		}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

type encodeUUIDString struct{}

func (encodeUUIDString) Encode(value any, buf []byte) ([]byte, error) {
	u, err := parseUUID(value.(string))
	if err != nil {
		return nil, fmt.Errorf("uuid %q: %w", value, err)
	}
	return append(buf, u[:]...), nil
}

// parseUUID reads a uuid's text as pgtype.UUID.Scan does (36 characters,
// the four separators not looked at, or 32 hex digits) without its
// allocations: every group commit and consumer batch parses each id.
func parseUUID(s string) (u [16]byte, err error) {
	var hexAt [32]int
	switch len(s) {
	case 36:
		for i, j := 0, 0; i < 36; i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				continue
			}
			hexAt[j], j = i, j+1
		}
	case 32:
		for i := range hexAt {
			hexAt[i] = i
		}
	default:
		return u, fmt.Errorf("cannot parse UUID %v", s)
	}
	for i := range u {
		hi, ok1 := fromHex(s[hexAt[2*i]])
		lo, ok2 := fromHex(s[hexAt[2*i+1]])
		if !ok1 || !ok2 {
			return u, fmt.Errorf("cannot parse UUID %v: not hexadecimal", s)
		}
		u[i] = hi<<4 | lo
	}
	return u, nil
}

func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
