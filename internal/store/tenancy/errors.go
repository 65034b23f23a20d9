package tenancy

import (
	"fmt"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Every operation of this package refuses in internal/refusal's words (an
// id naming nothing is refusal.NotFound, a clash refusal.Conflict, a wrong
// input refusal.Invalid with its field), worded for a person: the admin API
// and the CLI show them as they are, and never the database's own text (see
// pg.Violation).

func notFound(resource, id string) error { return refusal.NoSuch(resource, id) }

func invalid(field string, err error) error { return refusal.InvalidField(field, "%s", err.Error()) }

// checkID refuses an id that is not a canonical uuid (lowercase
// 8-4-4-4-12: urn:uuid:, braces and upper case name nothing here) as
// unknown: it names nothing, and the database would answer with its own
// text.
func checkID(resource, id string) error {
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return notFound(resource, id)
	}
	return nil
}

// tenantMissing maps the foreign keys to tenants: a write naming a tenant
// that does not exist.
var tenantMissing = map[string]bool{
	"sources_tenant_id_fkey":             true,
	"workspaces_tenant_id_fkey":          true,
	"workspace_customers_tenant_id_fkey": true,
	"api_keys_tenant_id_fkey":            true,
	"tenant_limits_tenant_id_fkey":       true,
	"admin_tokens_tenant_id_fkey":        true,
}

// dbError turns what Postgres refused into an error a person can act on,
// or wraps it (what) for the log when it is not the request's fault.
func dbError(err error, what, tenantID string) error {
	name, ok := pg.Violation(err)
	if ok && tenantMissing[name] {
		return notFound("tenant", tenantID)
	}
	return fmt.Errorf("%s: %w", what, err)
}
