package catalog

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ResourceTypesMismatch is a process whose resource types are not the
// deployment's: it would create, read and accept other topics than its
// peers.
type ResourceTypesMismatch struct {
	Process, Deployment []string
}

func (e *ResourceTypesMismatch) Error() string {
	return fmt.Sprintf("this process's resource types (%s) are not the deployment's, stored in postgres (%s): leave --tenant-resource-types (SLUICE_TENANT_RESOURCE_TYPES) empty to use the deployment's, and add one with `sluice eventtype resource-types add NAME` then restart the processes",
		strings.Join(e.Process, ","), strings.Join(e.Deployment, ","))
}

// StoredResourceTypes is the deployment's list, sorted; nil when no
// process stored one yet.
func StoredResourceTypes(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT name FROM tenant_resource_types ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("read the deployment's resource types: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("read the deployment's resource types: %w", err)
	}
	return names, nil
}

// SettleResourceTypes returns the deployment's resource types: those
// stored, or, when none are yet, own (DefaultResourceTypes when empty),
// stored now: the first process of a deployment decides. A process that
// names a list of its own (own not empty) other than the stored one gets a
// *ResourceTypesMismatch.
func SettleResourceTypes(ctx context.Context, pool *pgxpool.Pool, own []string) ([]string, error) {
	var settled []string
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Two first processes starting together store one list.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('sluice.resource_types'))`); err != nil {
			return err
		}
		stored, err := StoredResourceTypes(ctx, tx)
		if err != nil || len(stored) > 0 {
			settled = stored
			return err
		}
		settled = sorted(cmpOr(own, DefaultResourceTypes))
		_, err = tx.Exec(ctx, `INSERT INTO tenant_resource_types (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`, settled)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("settle the deployment's resource types: %w", err)
	}
	return settled, SameResourceTypes(own, settled)
}

// SameResourceTypes is nil when own is empty (the process takes the
// deployment's) or names the deployment's list, in any order.
func SameResourceTypes(own, deployment []string) error {
	if len(own) == 0 || slices.Equal(sorted(own), sorted(deployment)) {
		return nil
	}
	return &ResourceTypesMismatch{Process: sorted(own), Deployment: sorted(deployment)}
}

// AddResourceType adds name to the deployment's resource types; adding
// one already there changes nothing. Running processes keep the list they
// started with (their readiness names the difference) until restarted.
func AddResourceType(ctx context.Context, pool *pgxpool.Pool, name string) error {
	if !resourceTypeName.MatchString(name) {
		return invalid("name", "resource type %q: %s", name, resourceTypeRule)
	}
	if _, err := SettleResourceTypes(ctx, pool, nil); err != nil {
		return err
	}
	if _, err := pool.Exec(ctx, `INSERT INTO tenant_resource_types (name) VALUES ($1) ON CONFLICT DO NOTHING`, name); err != nil {
		return fmt.Errorf("add resource type %s: %w", name, err)
	}
	return nil
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

func cmpOr(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}
