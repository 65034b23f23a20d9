package lifecycle

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/refusal"
)

// noTenant refuses erasing a tenant that does not exist (or was erased
// already).
func noTenant() error { return refusal.New(refusal.NotFound, "lifecycle: no such tenant") }

// TenantErased counts what an offboarding removed.
type TenantErased struct {
	Events, Payloads, OutboxRows, DeadLetters int64
	// Effects are the rows the effect groups' statements reported.
	Effects int64
	// Its endpoints (their secrets go with them), their deliveries and
	// the deliveries' failed attempts.
	Endpoints, Deliveries, DeliveryAttempts int64
}

// EraseTenant removes every row of tenant in one transaction: it is all gone
// or nothing is. effects are the effect groups' statements deleting a
// tenant's effects ($1 its id; effect.Group.Erase), every group of the
// binary's: they run first, as their rows may reference the tenant's
// workspaces and sources, and the rows they report are counted as its
// effects. Records already in Kafka stay until the topics' retention;
// consumers that meet them find no source account to apply them to.
func EraseTenant(ctx context.Context, pool *pgxpool.Pool, tenant string, effects []string) (TenantErased, error) {
	var e TenantErased
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var legacy bool
		if err := tx.QueryRow(ctx, legacyExistsSQL).Scan(&legacy); err != nil {
			return err
		}
		if legacy {
			if _, err := tx.Exec(ctx, eraseTenantLegacySQL, tenant); err != nil {
				return err
			}
		}
		for _, stmt := range effects {
			tag, err := tx.Exec(ctx, stmt, tenant)
			if err != nil {
				return fmt.Errorf("erase effects: %w", err)
			}
			e.Effects += tag.RowsAffected()
		}
		var tenants int64
		if err := tx.QueryRow(ctx, eraseTenantSQL, tenant).Scan(&tenants, &e.Events, &e.Payloads, &e.OutboxRows, &e.DeadLetters,
			&e.Endpoints, &e.Deliveries, &e.DeliveryAttempts); err != nil {
			return err
		}
		if tenants == 0 {
			return noTenant()
		}
		return nil
	})
	if err != nil {
		return TenantErased{}, fmt.Errorf("erase tenant %s: %w", tenant, err)
	}
	return e, nil
}

// SubjectErased counts what a subject purge removed.
type SubjectErased struct {
	// Events whose payload was purged; their keys stay (erased_at set).
	Events, Conflicts, OutboxRows, DeadLetters int64
	// Deliveries to endpoints of those events, or holding a body that
	// mentions the subject, with their attempts: deleted, sent or not.
	Deliveries, DeliveryAttempts int64
}

// EraseSubject purges every kept payload that mentions subject (its bytes,
// as they appear in the body), of tenant or of every tenant (""), and
// deletes the deliveries to endpoints of the events it purged (and those
// whose own body mentions it), with their attempts: one still pending is
// never sent. A record of the event still in Kafka can be fanned out again
// by a rewind of the fan-out group; its new delivery finds the payload
// erased. Event
// keys and their hashes stay, so a redelivery of an erased event is still
// a duplicate (nothing is stored again) and a claim for it is answered
// "erased" (consumers.ErrPayloadExpired).
func EraseSubject(ctx context.Context, pool *pgxpool.Pool, tenant, subject string) (SubjectErased, error) {
	var e SubjectErased
	if subject == "" {
		return e, errors.New("erase subject: empty subject would match every payload")
	}
	var t *string
	if tenant != "" {
		t = &tenant
	}
	if err := pool.QueryRow(ctx, eraseSubjectSQL, subject, t).Scan(&e.Events, &e.Conflicts, &e.OutboxRows, &e.DeadLetters,
		&e.Deliveries, &e.DeliveryAttempts); err != nil {
		return e, fmt.Errorf("erase subject: %w", err)
	}
	return e, nil
}
