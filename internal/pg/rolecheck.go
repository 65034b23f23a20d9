package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Querier is what the checks read through: a pool or a connection.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// The checks below answer for the connection's own role (current_user).
// Each failure is one line a person can act on: what is missing, for which
// stage, and the statement or command that gives it. Several lines are
// joined (errors.Join), one per missing privilege.

// CheckPrivileges says what the role lacks of stage's privileges
// (Privileges, with the running effect groups' tables), or a table it
// cannot find (a schema not migrated).
func CheckPrivileges(ctx context.Context, q Querier, stage Stage, effects EffectTables) error {
	need := Privileges(stage, effects)
	var names, privs, kinds, schemas, bare []string
	for _, p := range need {
		schema, name, ok := strings.Cut(p.Table, ".")
		if !ok || p.Schema {
			schema, name = "", p.Table
		}
		names, privs, kinds = append(names, p.Table), append(privs, p.Privilege), append(kinds, p.kind())
		schemas, bare = append(schemas, schema), append(bare, name)
	}
	rows, err := q.Query(ctx, missingPrivilegesSQL, names, privs, kinds, schemas, bare)
	if err != nil {
		return fmt.Errorf("check the privileges of stage %s: %w", stage, err)
	}
	type miss struct{ role, name, priv, kind string }
	missing, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (miss, error) {
		var m miss
		return m, r.Scan(&m.role, &m.name, &m.priv, &m.kind)
	})
	if err != nil {
		return fmt.Errorf("check the privileges of stage %s: %w", stage, err)
	}
	var errs []error
	for _, m := range missing {
		errs = append(errs, privilegeError(m.role, stage, TablePrivilege{Table: m.name, Privilege: m.priv, Sequence: m.kind == "sequence", Schema: m.kind == "schema"}))
	}
	return errors.Join(errs...)
}

// privilegeError is the line for one missing privilege; priv "" is a
// table that is not there at all.
func privilegeError(role string, stage Stage, p TablePrivilege) error {
	r := pgx.Identifier{role}.Sanitize()
	switch {
	case p.Privilege == "":
		return fmt.Errorf("%s is missing (stage %s): the schema is not migrated; run `sluice migrate` as the schema's owner", p.object(), stage)
	case p.Table == "":
		return fmt.Errorf("role %s lacks USAGE on schema public (stage %s): GRANT USAGE ON SCHEMA public TO %s, or run `sluice migrate --grant %s=%s` as the schema's owner",
			role, stage, r, stage, role)
	}
	return fmt.Errorf("role %s lacks %s on %s (stage %s): GRANT %s ON %s TO %s, or run `sluice migrate --grant %s=%s` as the schema's owner",
		role, p.Privilege, p.object(), stage, p.Privilege, p.object(), r, stage, role)
}

// missingPrivilegesSQL: of the privileges ($1[i] the name of a $3[i]
// table, sequence or schema, $2[i] the privilege; $4[i] the table's schema
// when it names one, $5[i] its name in it), those the role does not hold,
// and a name missing once with privilege ”. A table of a named schema is
// found in the catalog: to_regclass would fail for want of USAGE on the
// schema, which is one of the privileges checked.
const missingPrivilegesSQL = `
WITH need AS (
    SELECT g.t, g.p, g.k, CASE
        WHEN g.k = 'schema' THEN (SELECT n.oid FROM pg_namespace n WHERE n.nspname = g.n)
        WHEN g.s = '' THEN to_regclass(quote_ident(g.n))::oid
        ELSE (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = g.s AND c.relname = g.n)
    END AS o
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS g(t, p, k, s, n)
)
SELECT current_user::text, '', 'USAGE', 'table' WHERE NOT has_schema_privilege('public', 'USAGE')
UNION ALL
SELECT DISTINCT ON (n.t) current_user::text, n.t, '', n.k FROM need n WHERE n.o IS NULL
UNION ALL
SELECT current_user::text, n.t, n.p, n.k FROM need n
WHERE n.o IS NOT NULL AND NOT CASE n.k
    WHEN 'sequence' THEN has_sequence_privilege(n.o, n.p)
    WHEN 'schema' THEN has_schema_privilege(n.o, n.p)
    ELSE has_table_privilege(n.o, n.p) END`

// CheckReplication says whether the role may open the relay's
// replication connection: the REPLICATION attribute (or, on RDS and
// Aurora, membership of rds_replication; a superuser has it anyway).
func CheckReplication(ctx context.Context, q Querier) error {
	var role string
	var ok bool
	if err := q.QueryRow(ctx, replicationSQL).Scan(&role, &ok); err != nil {
		return fmt.Errorf("check the REPLICATION attribute: %w", err)
	}
	if ok {
		return nil
	}
	r := pgx.Identifier{role}.Sanitize()
	return fmt.Errorf("role %s lacks the REPLICATION attribute (stage relay): as a superuser ALTER ROLE %s WITH REPLICATION (RDS and Aurora: GRANT rds_replication TO %s)",
		role, r, r)
}

const replicationSQL = `
SELECT current_user::text, r.rolsuper OR r.rolreplication OR EXISTS (
    SELECT 1 FROM pg_roles m WHERE m.rolname = 'rds_replication' AND pg_has_role(current_user, m.oid, 'MEMBER'))
FROM pg_roles r WHERE r.rolname = current_user`

// CheckOwns says which of tables the role does not own (directly or as
// a member of the owning role), for stage, each line saying why that
// stage needs ownership (why) and what to do instead (fix).
func CheckOwns(ctx context.Context, q Querier, stage Stage, why, fix string, tables ...string) error {
	rows, err := q.Query(ctx, notOwnedSQL, tables)
	if err != nil {
		return fmt.Errorf("check ownership (stage %s): %w", stage, err)
	}
	type notOwned struct{ role, table, owner string }
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notOwned, error) {
		var n notOwned
		return n, r.Scan(&n.role, &n.table, &n.owner)
	})
	if err != nil {
		return fmt.Errorf("check ownership (stage %s): %w", stage, err)
	}
	var errs []error
	for _, n := range found {
		if n.owner == "" {
			errs = append(errs, privilegeError(n.role, stage, TablePrivilege{Table: n.table}))
			continue
		}
		errs = append(errs, fmt.Errorf("role %s does not own %s (stage %s; %s owns it): %s; %s",
			n.role, n.table, stage, n.owner, why, strings.ReplaceAll(fix, "{owner}", n.owner)))
	}
	return errors.Join(errs...)
}

const notOwnedSQL = `
SELECT current_user::text, t, coalesce(pg_get_userbyid(c.relowner)::text, '')
FROM unnest($1::text[]) AS t LEFT JOIN pg_class c ON c.oid = to_regclass(quote_ident(t))
WHERE c.oid IS NULL OR NOT pg_has_role(current_user, c.relowner, 'USAGE')`

// IsInsufficientPrivilege reports whether Postgres refused err's statement
// for a privilege the role lacks (42501).
func IsInsufficientPrivilege(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InsufficientPrivilege
}

// CheckOwner says whether the role may do the owner stage's work: it owns
// the outbox (a publication's table must be its own) and the publication
// (migrations alter it as its owner).
func CheckOwner(ctx context.Context, q Querier, publication string) error {
	errs := []error{CheckOwns(ctx, q, StageOwner, "the publication "+publication+" needs ownership of its table",
		"run `sluice migrate` as {owner}, the schema's owner", "outbox")}
	var role, owner string
	err := q.QueryRow(ctx, `SELECT current_user::text, pg_get_userbyid(pubowner)::text FROM pg_publication
		WHERE pubname = $1 AND NOT pg_has_role(current_user, pubowner, 'USAGE')`, publication).Scan(&role, &owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		errs = append(errs, fmt.Errorf("check who owns publication %s: %w", publication, err))
	default:
		errs = append(errs, fmt.Errorf("role %s does not own publication %s (stage owner; %s owns it): migrations alter it as its owner; as %s or a superuser ALTER PUBLICATION %s OWNER TO %s",
			role, publication, owner, owner, pgx.Identifier{publication}.Sanitize(), pgx.Identifier{role}.Sanitize()))
	}
	return errors.Join(errs...)
}
