package sealed_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/keyring/sealed"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

var databaseURL string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDatabase(m, "sealed", &databaseURL)) }

// bundle is one test's table of sealed values and the keys at hand.
type bundle struct {
	pool     *pgxpool.Pool
	col      sealed.Column
	old, new string // textual keys k1 and k2
	audited  *int
}

func ad(owner string) []byte { return []byte("test:" + owner) }

func setup(t *testing.T) bundle {
	t.Helper()
	ctx := context.Background()
	pool, err := pg.Connect(ctx, databaseURL, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	table := "sealed_" + testenv.RandomSuffix()
	if _, err := pool.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id bigint PRIMARY KEY, owner uuid NOT NULL DEFAULT gen_random_uuid(), key_id text, sealed bytea)`, table)); err != nil {
		t.Fatal(err)
	}
	audited := new(int)
	var mu sync.Mutex
	col := sealed.Column{Kind: "test values", Table: table, ID: "id", Owner: "owner", KeyID: "key_id", Sealed: "sealed", AD: ad,
		Audit: func(ctx context.Context, tx pgx.Tx, keyID string) error {
			mu.Lock()
			defer mu.Unlock()
			*audited++
			return nil
		}}
	return bundle{pool: pool, col: col, old: key(t), new: key(t), audited: audited}
}

func key(t *testing.T) string {
	t.Helper()
	k, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ring(t *testing.T, spec string) *keyring.Ring {
	t.Helper()
	r, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fill stores n values "value-<id>" sealed with r, ids from first on.
func (b bundle) fill(t *testing.T, r *keyring.Ring, first, n int) {
	t.Helper()
	ctx := context.Background()
	for id := first; id < first+n; id++ {
		var owner string
		if err := b.pool.QueryRow(ctx, fmt.Sprintf(`INSERT INTO %s (id) VALUES ($1) RETURNING owner::text`, b.col.Table), id).Scan(&owner); err != nil {
			t.Fatal(err)
		}
		keyID, ct, err := r.Seal(fmt.Appendf(nil, "value-%d", id), ad(owner))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.pool.Exec(ctx, fmt.Sprintf(`UPDATE %s SET key_id = $2, sealed = $3 WHERE id = $1`, b.col.Table), id, keyID, ct); err != nil {
			t.Fatal(err)
		}
	}
}

// values opens every sealed value with r alone; it fails the test on one
// r cannot open or that is not what fill stored.
func (b bundle) values(t *testing.T, r *keyring.Ring) int {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), fmt.Sprintf(`SELECT id, owner::text, key_id, sealed FROM %s WHERE key_id IS NOT NULL ORDER BY id`, b.col.Table))
	if err != nil {
		t.Fatal(err)
	}
	var (
		id            int64
		owner, keyID  string
		ct            []byte
		n             int
		wrong, closed int
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &owner, &keyID, &ct}, func() error {
		n++
		plain, err := r.Open(keyID, ct, ad(owner))
		switch {
		case err != nil:
			closed++
		case string(plain) != fmt.Sprintf("value-%d", id) && string(plain) != "replaced":
			wrong++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if closed > 0 || wrong > 0 {
		t.Fatalf("%d of %d values do not open with the ring alone, %d hold another value", closed, n, wrong)
	}
	return n
}

// A rotation re-seals every value with the first key, batch by batch
// (each audited), and leaves a row with nothing sealed alone.
func TestRotateResealsEveryValueWithTheFirstKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fill(t, ring(t, "k1:"+b.old), 1, 250)
	if _, err := b.pool.Exec(context.Background(), fmt.Sprintf(`INSERT INTO %s (id) VALUES (1000)`, b.col.Table)); err != nil {
		t.Fatal(err)
	}
	res, err := sealed.Rotate(context.Background(), b.pool, ring(t, "k2:"+b.new+",k1:"+b.old), b.col, sealed.Options{BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resealed != 250 || len(res.Remaining) != 0 || len(res.Unopenable) != 0 {
		t.Fatalf("rotation: %+v, want 250 re-sealed and none left", res)
	}
	if n := b.values(t, ring(t, "k2:"+b.new)); n != 250 {
		t.Fatalf("%d sealed values after the rotation, want 250", n)
	}
	if *b.audited != 36 { // ceil(250/7)
		t.Errorf("%d batches audited, want 36", *b.audited)
	}
	counts, err := sealed.Count(context.Background(), b.pool, b.col)
	if err != nil || len(counts) != 1 || counts["k2"] != 250 {
		t.Errorf("counts after the rotation %v, %v; want k2 250", counts, err)
	}
	again, err := sealed.Rotate(context.Background(), b.pool, ring(t, "k2:"+b.new+",k1:"+b.old), b.col, sealed.Options{})
	if err != nil || again.Resealed != 0 {
		t.Errorf("a second rotation re-sealed %d (%v), want 0", again.Resealed, err)
	}
}

// Values sealed by a key the ring lacks, or by other bytes under an id it
// holds, are left as they are and named; the others are re-sealed.
func TestRotateNamesTheKeysTheRingCannotOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fill(t, ring(t, "k1:"+b.old), 1, 20)
	b.fill(t, ring(t, "k0:"+key(t)), 21, 3)
	b.fill(t, ring(t, "k9:"+key(t)), 24, 2)
	r := ring(t, "k2:"+b.new+",k1:"+b.old+",k9:"+key(t)) // k9: other bytes
	res, err := sealed.Rotate(context.Background(), b.pool, r, b.col, sealed.Options{BatchSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	if res.Resealed != 20 || fmt.Sprint(res.Remaining) != "map[k0:3 k9:2]" || fmt.Sprint(res.Unopenable) != "[k0 k9]" {
		t.Fatalf("rotation: %+v, want 20 re-sealed, k0 3 and k9 2 left, unopenable", res)
	}
}

// Two rotations at once (two machines) share the rows: each value is
// re-sealed once, by one of them.
func TestTwoRotationsAtOnceResealEachValueOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fill(t, ring(t, "k1:"+b.old), 1, 400)
	r := ring(t, "k2:"+b.new+",k1:"+b.old)
	var (
		wg      sync.WaitGroup
		results [2]sealed.Result
		errs    [2]error
	)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = sealed.Rotate(context.Background(), b.pool, r, b.col, sealed.Options{BatchSize: 5})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs[:]...); err != nil {
		t.Fatal(err)
	}
	if sum := results[0].Resealed + results[1].Resealed; sum != 400 {
		t.Fatalf("the rotations re-sealed %d and %d, %d in all; want 400", results[0].Resealed, results[1].Resealed, sum)
	}
	// Each counted what was left when it ended, which may be the other's
	// open batch (skipped, never waited for): what is left after both is
	// the column's count.
	counts, err := sealed.Count(context.Background(), b.pool, b.col)
	if err != nil || len(counts) != 1 || counts["k2"] != 400 {
		t.Fatalf("left after the rotations: %v, %v; want k2 400", counts, err)
	}
	b.values(t, ring(t, "k2:"+b.new))
}

// A rotation stopped after its first batch (a kill, a cancelled command)
// kept that batch, and the next one re-seals exactly the rest.
func TestRotationStoppedPartwayResumes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fill(t, ring(t, "k1:"+b.old), 1, 30)
	r := ring(t, "k2:"+b.new+",k1:"+b.old)
	ctx, stop := context.WithCancel(context.Background())
	_, err := sealed.Rotate(ctx, b.pool, r, b.col, sealed.Options{BatchSize: 8, AfterBatch: func(sealed.Progress) { stop() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped rotation: %v, want its context's end", err)
	}
	counts, err := sealed.Count(context.Background(), b.pool, b.col)
	if err != nil || counts["k2"] != 8 || counts["k1"] != 22 {
		t.Fatalf("after the stop: %v, %v; want k2 8 and k1 22", counts, err)
	}
	res, err := sealed.Rotate(context.Background(), b.pool, r, b.col, sealed.Options{BatchSize: 8})
	if err != nil || res.Resealed != 22 || len(res.Remaining) != 0 {
		t.Fatalf("resumed rotation: %+v, %v; want the 22 left re-sealed", res, err)
	}
	b.values(t, ring(t, "k2:"+b.new))
}

// A value an operator is replacing while the rotation runs (a secret
// rotated, headers set) is skipped, never waited for nor overwritten with
// the old value re-sealed; the rotation reports it left, and the next run
// finds it sealed by the operator's key.
func TestRotationNeverOverwritesAValueReplacedMeanwhile(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fill(t, ring(t, "k1:"+b.old), 1, 10)
	r := ring(t, "k2:"+b.new+",k1:"+b.old)
	ctx := context.Background()
	operator, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = operator.Rollback(ctx) }()
	var owner string
	if err := operator.QueryRow(ctx, fmt.Sprintf(`SELECT owner::text FROM %s WHERE id = 5`, b.col.Table)).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	keyID, ct, err := r.Seal([]byte("replaced"), ad(owner))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := operator.Exec(ctx, fmt.Sprintf(`UPDATE %s SET key_id = $2, sealed = $3 WHERE id = $1`, b.col.Table), 5, keyID, ct); err != nil {
		t.Fatal(err)
	}
	bounded, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := sealed.Rotate(bounded, b.pool, r, b.col, sealed.Options{BatchSize: 3})
	if err != nil {
		t.Fatalf("rotation beside an operator's open change: %v", err)
	}
	if res.Resealed != 9 || fmt.Sprint(res.Remaining) != "map[k1:1]" {
		t.Fatalf("rotation: %+v, want 9 re-sealed and the operator's row left", res)
	}
	if err := operator.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var plain string
	if err := b.pool.QueryRow(ctx, fmt.Sprintf(`SELECT key_id, sealed FROM %s WHERE id = 5`, b.col.Table)).Scan(&keyID, &ct); err != nil {
		t.Fatal(err)
	}
	p, err := r.Open(keyID, ct, ad(owner))
	if plain = string(p); err != nil || plain != "replaced" {
		t.Fatalf("the operator's value is %q (%v), want replaced", plain, err)
	}
	if res, err := sealed.Rotate(ctx, b.pool, r, b.col, sealed.Options{}); err != nil || res.Resealed != 0 || len(res.Remaining) != 0 {
		t.Fatalf("the next rotation: %+v, %v; want nothing to do", res, err)
	}
}

// A table whose values are bound to their own key (an endpoint's headers,
// a source's API credentials: owner and primary key are one column) is
// rotated like the others.
func TestRotateAColumnBoundToItsOwnKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	table := b.col.Table + "_own"
	if _, err := b.pool.Exec(ctx, fmt.Sprintf(`CREATE TABLE %s (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), key_id text, sealed bytea)`, table)); err != nil {
		t.Fatal(err)
	}
	old, r := ring(t, "k1:"+b.old), ring(t, "k2:"+b.new+",k1:"+b.old)
	for range 5 {
		var id string
		if err := b.pool.QueryRow(ctx, fmt.Sprintf(`INSERT INTO %s DEFAULT VALUES RETURNING id::text`, table)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		keyID, ct, err := old.Seal([]byte("v"), ad(id))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.pool.Exec(ctx, fmt.Sprintf(`UPDATE %s SET key_id = $2, sealed = $3 WHERE id = $1`, table), id, keyID, ct); err != nil {
			t.Fatal(err)
		}
	}
	col := sealed.Column{Kind: "own", Table: table, ID: "id", Owner: "id", KeyID: "key_id", Sealed: "sealed", AD: ad}
	res, err := sealed.Rotate(ctx, b.pool, r, col, sealed.Options{BatchSize: 2})
	if err != nil || res.Resealed != 5 || len(res.Remaining) != 0 {
		t.Fatalf("rotation: %+v, %v; want 5 re-sealed", res, err)
	}
}
