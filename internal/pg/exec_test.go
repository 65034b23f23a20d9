package pg_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestExecSendsALargeBindFromOneBuffer holds Exec to its reason for being:
// a Bind of many parameters and a few hundred KiB costs about its own size
// in allocations, not the chain of ever larger buffers the frontend grows
// it through, a step for each parameter (several times its size without
// the reservation). Not parallel: it reads the process's allocation
// counter.
func TestExecSendsALargeBindFromOneBuffer(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Require(t).DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const params = 32
	sql := "SELECT 0::int8"
	for i := range params {
		sql += fmt.Sprintf(" + (SELECT sum(length(b)) FROM unnest($%d::bytea[]) b)", i+1)
	}
	sd, err := conn.Prepare(ctx, "sluice_test_exec", sql)
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 << 10
	bodies := [][]byte{make([]byte, size/params/2), make([]byte, size/params/2)}
	var p pg.Params
	exec := func() {
		p.Reset()
		for range params {
			p.Bytea(bodies)
		}
		rr := p.Exec(ctx, conn.PgConn(), sd.Name, []int16{pgx.BinaryFormatCode})
		var got int64
		for rr.NextRow() {
			got = int64(binary.BigEndian.Uint64(rr.Values()[0]))
		}
		if _, err := rr.Close(); err != nil {
			t.Fatal(err)
		}
		if got != size {
			t.Fatalf("the server read %d bytes of parameters, want %d", got, size)
		}
	}
	exec() // grows p's own buffer
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		exec()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > size*3/2 {
		t.Errorf("one Exec of a %d KiB Bind allocated %d KiB, want at most 1.5 times the Bind", size>>10, per>>10)
	}
}
