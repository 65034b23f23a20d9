package orders

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/effect"
)

// Deliberately wrong versions of the group, each breaking one promise; the
// kit must fail every one of them (kit_test.go).

// WrongKeyedByEventID keys every operation by the event that asked for it
// instead of its business key: two events about one order line reserve
// its stock twice.
func WrongKeyedByEventID() effect.Group {
	stock := effect.NewCounter("orders_stock", stockSQL, stockFreeSQL)
	g := Group()
	g.Handler = effect.Each(func(ctx context.Context, tx *effect.Tx, e effect.Event[Body]) error {
		e.SourceAccount += "/" + e.ID // every business key now names the event
		return apply(ctx, tx, stock, e)
	})
	return g
}

//go:embed testdata/project_unguarded.sql
var projectUnguardedSQL string

// WrongWithoutVersionGuard writes the order's projection whatever the
// version: an older event arriving last wins.
func WrongWithoutVersionGuard() effect.Group {
	projectSQL = projectUnguardedSQL // the test binary runs only this group
	return Group()
}

//go:embed testdata/stock_now.sql
var stockNowSQL string

// WrongOutOfLockOrder updates the shared stock rows as each line comes, in
// the order the order names them, instead of with a Counter: two batches
// meeting on the same SKUs from both ends wait for each other.
func WrongOutOfLockOrder() effect.Group {
	g := Group()
	g.Handler = effect.Each(func(ctx context.Context, tx *effect.Tx, e effect.Event[Body]) error {
		o := e.Payload.Order
		status := strings.TrimPrefix(e.Type, "hmac.order.")
		if _, err := effect.Project(ctx, tx, projectSQL, e.TenantID, o.ID, status, o.Total, o.Version, e.InboxID, e.ID); err != nil {
			return err
		}
		op, other, sign := "reserve", "release", int64(-1)
		switch status {
		case "cancelled":
			op, other, sign = "release", "reserve", 1
		case "updated":
			return nil
		}
		for _, l := range o.Lines {
			var otherDone bool
			if err := tx.QueryRow(ctx, existsSQL, e.BusinessKey(o.ID+"/"+l.ID, other)).Scan(&otherDone); err != nil {
				return err
			}
			made, err := effect.Once(ctx, tx, lineSQL, e.BusinessKey(o.ID+"/"+l.ID, op), e.TenantID, o.ID, l.ID, l.SKU, l.Quantity, op, e.ID)
			if err != nil {
				return err
			}
			if made && otherDone == (op == "release") {
				if _, err := tx.Exec(ctx, stockNowSQL, e.TenantID, l.SKU, sign*l.Quantity); err != nil {
					return fmt.Errorf("stock %s: %w", l.SKU, err)
				}
			}
		}
		if status == "placed" {
			return confirm(ctx, tx, e)
		}
		return nil
	})
	return g
}
