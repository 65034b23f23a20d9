package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/keyring/sealed"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// KeysCmd groups the rotation of the key ring (SLUICE_SECRET_KEY):
// docs/managed-services.md#rotating-the-secret-key.
type KeysCmd struct {
	Rotate KeysRotateCmd `cmd:"" help:"Re-seal every stored secret with the key ring's first key; exits 1 while any remain sealed by another key."`
	Status KeysStatusCmd `cmd:"" help:"How many stored secrets each key id seals, and which of them this key ring holds."`
}

// sealedColumns are every column of the stores holding values sealed
// with the key ring, audited as the CLI.
func sealedColumns() []sealed.Column {
	actor := &audit.Actor{}
	return append(tenancy.Store{Actor: actor}.SealedColumns(), endpoints.Store{Actor: actor}.SealedColumns()...)
}

// keysSetup opens the database and the key ring the keys commands need.
func (g *Globals) keysSetup(ctx context.Context) (*pgxpool.Pool, *keyring.Ring, error) {
	ring, err := keyring.Parse(g.SecretKey)
	if err != nil {
		return nil, nil, err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	return pool, ring, nil
}

// KeysRotateCmd re-seals what another key than the first sealed.
type KeysRotateCmd struct {
	Output
	BatchSize int `name:"batch-size" default:"100" help:"Secrets re-sealed per transaction, 1 to 10000: each batch's rows are locked for its few milliseconds."`
}

// rotation is what keys rotate prints.
type rotation struct {
	Primary string          `json:"primary"`
	Kinds   []sealed.Result `json:"kinds"`
}

// remaining is how many values are left under other keys than the first,
// and which of those keys the ring could not open.
func (r rotation) remaining() (n int, unopenable []string) {
	for _, k := range r.Kinds {
		for _, c := range k.Remaining {
			n += c
		}
		for _, id := range k.Unopenable {
			if !slices.Contains(unopenable, id) {
				unopenable = append(unopenable, id)
			}
		}
	}
	slices.Sort(unopenable)
	return n, unopenable
}

// RotationError is a rotation that left values sealed by other keys than
// the first: the old key may not be dropped yet.
type RotationError struct {
	rotation
}

func (e *RotationError) Error() string {
	n, unopenable := e.remaining()
	if len(unopenable) > 0 {
		return fmt.Sprintf("%d stored secret(s) are still sealed by other keys than %s; the key ring cannot open those sealed by key id(s) %s: "+
			"add those keys to SLUICE_SECRET_KEY (after the first) and run sluice keys rotate again", n, e.Primary, strings.Join(unopenable, ", "))
	}
	return fmt.Sprintf("%d stored secret(s) are still sealed by other keys than %s (sealed meanwhile by a process whose key ring puts another key first, "+
		"or held by another transaction): restart every process with %s first and run sluice keys rotate again", n, e.Primary, e.Primary)
}

func (c *KeysRotateCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	if c.BatchSize < 1 || c.BatchSize > 10_000 {
		return fmt.Errorf("--batch-size %d: want 1 to 10000", c.BatchSize)
	}
	pool, ring, err := g.keysSetup(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	progress := func(p sealed.Progress) {
		log.Info("re-sealed a batch", slog.String("kind", p.Kind), slog.Int("batch", p.Resealed), slog.Int("total", p.Total))
	}
	out := rotation{Primary: ring.Primary()}
	for _, col := range sealedColumns() {
		res, err := sealed.Rotate(ctx, pool, ring, col, sealed.Options{BatchSize: c.BatchSize, AfterBatch: progress})
		if err != nil {
			return err
		}
		out.Kinds = append(out.Kinds, res)
	}
	if n, _ := out.remaining(); n > 0 {
		if c.Output.Output != "json" {
			printRotation(out)
		}
		return &RotationError{out}
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(out)
	}
	printRotation(out)
	return nil
}

func printRotation(r rotation) {
	fmt.Printf("first key %s\n", shown(r.Primary))
	for _, k := range r.Kinds {
		left := "none left under other keys"
		if len(k.Remaining) > 0 {
			left = "left: " + byKey(k.Remaining, k.Unopenable)
		}
		fmt.Printf("%s: %d re-sealed, %s\n", k.Kind, k.Resealed, left)
	}
}

// byKey writes counts by key id ("k1 3, k0 2 (cannot open)").
func byKey(counts map[string]int, unopenable []string) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		part := fmt.Sprintf("%s %d", shown(id), counts[id])
		if slices.Contains(unopenable, id) {
			part += " (cannot open)"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}

// KeysStatusCmd counts what each key id seals.
type KeysStatusCmd struct {
	Output
}

// keyUsage is one key id's line of keys status.
type keyUsage struct {
	ID      string         `json:"id"`
	InRing  bool           `json:"in_ring"`
	Primary bool           `json:"primary"`
	Secrets int            `json:"secrets"`
	ByKind  map[string]int `json:"by_kind"`
}

func (c *KeysStatusCmd) Run(ctx context.Context, g *Globals) error {
	pool, ring, err := g.keysSetup(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	usage := map[string]*keyUsage{}
	for _, id := range ring.IDs() {
		usage[id] = &keyUsage{ID: id, InRing: true, Primary: id == ring.Primary(), ByKind: map[string]int{}}
	}
	for _, col := range sealedColumns() {
		counts, err := sealed.Count(ctx, pool, col)
		if err != nil {
			return err
		}
		for id, n := range counts {
			u := usage[id]
			if u == nil {
				u = &keyUsage{ID: id, ByKind: map[string]int{}}
				usage[id] = u
			}
			u.Secrets += n
			u.ByKind[col.Kind] = n
		}
	}
	// The ring's keys in its order, then the ids it lacks.
	list := make([]keyUsage, 0, len(usage))
	for _, id := range ring.IDs() {
		list = append(list, *usage[id])
	}
	for _, id := range slices.Sorted(maps.Keys(usage)) {
		if !ring.Has(id) {
			list = append(list, *usage[id])
		}
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"items": list})
	}
	t := newTable(os.Stdout, "KEY\tRING\tSECRETS\tBY KIND")
	for _, u := range list {
		ringCell := "absent"
		switch {
		case u.Primary:
			ringCell = "first (seals)"
		case u.InRing:
			ringCell = "opens only"
		}
		t.row(u.ID, ringCell, u.Secrets, byKey(u.ByKind, nil))
	}
	return t.flush()
}
