// Package orders is an effect group of a shop's own, run by Sluice beside
// (or instead of) its built-in ones: a tenant's HMAC-signed order.placed,
// order.updated and order.cancelled, applied exactly once.
//
//   - Stock is reserved once per order line (business key: the order, the
//     line, "reserve") and released once on cancellation ("release"); a
//     release that arrives first stops the reservation. Stock rows are
//     shared by every order naming a SKU: a Counter moves them, netted per
//     batch and in SKU order.
//   - The order's projection keeps the greatest version; a cancelled order
//     is final.
//   - Each placed order is confirmed once, by an intent the deployment's
//     endpoint and the tenant's destinations receive.
package orders

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"github.com/sluicehq/sluice/effect"
)

var (
	//go:embed sql/project.sql
	projectSQL string
	//go:embed sql/line.sql
	lineSQL string
	//go:embed sql/same_line.sql
	sameLineSQL string
	//go:embed sql/exists.sql
	existsSQL string
	//go:embed sql/stock.sql
	stockSQL string
	//go:embed sql/stock_free.sql
	stockFreeSQL string
	//go:embed sql/trail.sql
	trailSQL string
	//go:embed sql/erase.sql
	eraseSQL string

	//go:embed migrations/*.sql
	migrations embed.FS
	//go:embed schemas
	schemas embed.FS
)

// Migrations is the group's own schema (command.Migrations).
func Migrations() fs.FS { sub, _ := fs.Sub(migrations, "migrations"); return sub }

// Schemas are its event types (command.EventTypes).
func Schemas() fs.FS { sub, _ := fs.Sub(schemas, "schemas"); return sub }

// Body is an order event as the shop signs it.
type Body struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Order Order  `json:"order"`
}

// Order is the order as the event describes it.
type Order struct {
	ID      string `json:"id"`
	Version int64  `json:"version"`
	Total   int64  `json:"total"`
	Lines   []Line `json:"lines"`
}

// Line is an order line.
type Line struct {
	ID       string `json:"id"`
	SKU      string `json:"sku"`
	Quantity int64  `json:"quantity"`
}

// Confirmation is the intent of a placed order.
type Confirmation struct {
	OrderID string `json:"order_id"`
	Total   int64  `json:"total"`
}

// Group is the orders' effects.
func Group() effect.Group {
	stock := effect.NewCounter("orders_stock", stockSQL, stockFreeSQL)
	return effect.Group{Name: "orders", Types: []string{"hmac.order.*"},
		Handler: effect.Each(func(ctx context.Context, tx *effect.Tx, e effect.Event[Body]) error {
			return apply(ctx, tx, stock, e)
		}),
		Tables: []string{"orders", "order_line_operations", "stock"}, Trail: trailSQL, Erase: eraseSQL}
}

func apply(ctx context.Context, tx *effect.Tx, stock *effect.Counter, e effect.Event[Body]) error {
	o := e.Payload.Order
	status := strings.TrimPrefix(e.Type, "hmac.order.")
	if o.ID == "" {
		return effect.Permanentf("%s: no order id", e.Type)
	}
	if _, err := effect.Project(ctx, tx, projectSQL, e.TenantID, o.ID, status, o.Total, o.Version, e.InboxID, e.ID); err != nil {
		return err
	}
	switch status {
	case "placed":
		for _, l := range o.Lines {
			if err := line(ctx, tx, stock, e, l, "reserve", -l.Quantity); err != nil {
				return err
			}
		}
		return confirm(ctx, tx, e)
	case "cancelled":
		for _, l := range o.Lines {
			if err := line(ctx, tx, stock, e, l, "release", l.Quantity); err != nil {
				return err
			}
		}
	}
	return nil
}

// line applies an operation on an order line once: its stock change, and
// its record. A reservation whose line was released before does nothing;
// a release of a line never reserved records itself, so a reservation
// arriving later does nothing either.
func line(ctx context.Context, tx *effect.Tx, stock *effect.Counter, e effect.Event[Body], l Line, op string, delta int64) error {
	order := e.Payload.Order.ID
	key := e.BusinessKey(order+"/"+l.ID, op)
	other := e.BusinessKey(order+"/"+l.ID, map[string]string{"reserve": "release", "release": "reserve"}[op])
	var otherDone bool
	if err := tx.QueryRow(ctx, existsSQL, other).Scan(&otherDone); err != nil {
		return fmt.Errorf("order %s line %s: %w", order, l.ID, err)
	}
	made, err := effect.Once(ctx, tx, lineSQL, key, e.TenantID, order, l.ID, l.SKU, l.Quantity, op, e.ID)
	if err != nil || !made {
		if err == nil {
			err = effect.Same(ctx, tx, sameLineSQL, key, l.SKU, l.Quantity)
		}
		return err
	}
	if op == "reserve" && otherDone || op == "release" && !otherDone {
		return nil
	}
	tx.Add(stock, e.Record, l.SKU, delta)
	return nil
}

// confirm emits the order's confirmation, once.
func confirm(ctx context.Context, tx *effect.Tx, e effect.Event[Body]) error {
	o := e.Payload.Order
	key := e.BusinessKey(o.ID, "confirm")
	made, err := effect.Once(ctx, tx, lineSQL, key, e.TenantID, o.ID, "", "", 0, "confirm", e.ID)
	if err != nil || !made {
		return err
	}
	tx.Emit(ctx, e.Record, effect.Intent{Type: "orders.confirmed", Key: key, ObjectType: "order", Subject: o.ID,
		Payload: Confirmation{OrderID: o.ID, Total: o.Total}})
	return nil
}
