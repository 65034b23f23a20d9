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
	var u pgtype.UUID
	if err := u.Scan(value.(string)); err != nil {
		return nil, fmt.Errorf("uuid %q: %w", value, err)
	}
	return append(buf, u.Bytes[:]...), nil
}
