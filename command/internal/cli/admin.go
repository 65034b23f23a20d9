package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

func (g *Globals) pool(ctx context.Context) (*pgxpool.Pool, error) {
	if g.DatabaseURL == "" {
		return nil, errors.New("SLUICE_DATABASE_URL is required")
	}
	return pg.Connect(ctx, g.DatabaseURL, 4)
}

func (g *Globals) store(ctx context.Context, needRing bool) (tenancy.Store, func(), error) {
	pool, err := g.pool(ctx)
	if err != nil {
		return tenancy.Store{}, nil, err
	}
	// Changes made here are audited with no token: the CLI acts with the
	// database's credentials.
	s := tenancy.Store{Pool: pool, Actor: &audit.Actor{}, Providers: kinds.Builtin()}
	if needRing {
		if s.Ring, err = keyring.Parse(g.SecretKey); err != nil {
			pool.Close()
			return tenancy.Store{}, nil, err
		}
	}
	return s, pool.Close, nil
}

// Output chooses how administration commands print: the new id alone on the
// first line (details after it), or one JSON object.
type Output struct {
	Output string `name:"output" short:"o" enum:"text,json" default:"text" help:"Output format: text or json."`
}

func (o Output) print(id string, fields map[string]any, details ...string) error {
	if o.Output == "json" {
		fields["id"] = id
		return json.NewEncoder(os.Stdout).Encode(fields)
	}
	lines := []string{shown(id)}
	for _, d := range details {
		lines = append(lines, shown(d))
	}
	_, err := fmt.Println(strings.Join(lines, "\n"))
	return err
}

// Paging selects one page of a list (keyset: pass the printed cursor on).
type Paging struct {
	Cursor string    `name:"cursor" help:"Start after this cursor (printed under a full page)." input:"max=512"`
	Limit  pageLimit `name:"limit" default:"50" help:"At most this many, 1 to 500."`
}

func (p Paging) page() tenancy.Page { return tenancy.Page{After: p.Cursor, Limit: int(p.Limit)} }

// printList prints a page: a table with header, one row of cells per item,
// and the next page's cursor under it; or one JSON object {items,
// next_cursor}.
func printList[T any](o Output, items []T, next, header string, row func(T) []any) error {
	if o.Output == "json" {
		if items == nil {
			items = []T{}
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"items": items, "next_cursor": next})
	}
	t := newTable(os.Stdout, header)
	for _, it := range items {
		t.row(row(it)...)
	}
	if err := t.flush(); err != nil {
		return err
	}
	if next != "" {
		_, err := fmt.Printf("more: --cursor %s\n", shown(next))
		return err
	}
	return nil
}

// field is one labelled value of a record printed by printOne.
type field struct {
	label string
	value any
}

// printOne prints one record: as JSON, or its id and then its fields one a
// line, the values aligned.
func printOne(o Output, v any, id string, fields ...field) error {
	if o.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(v)
	}
	fmt.Println(shown(id))
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 1, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(w, "%s:\t%s\n", f.label, shown(fmt.Sprint(f.value)))
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
