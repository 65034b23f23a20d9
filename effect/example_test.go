package effect_test

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/effect"
)

// Invited is the body of a tenant's own invitation.accepted event.
type Invited struct {
	InvitationID string `json:"invitation_id"`
	AccountID    string `json:"account_id"`
	Seats        int64  `json:"seats"`
}

// A group with a typed handler per record: seats are granted once per
// invitation (its business key), taken from the account's pool of seats,
// a row every invitation of the account shares (a Counter, written in key
// order when the batch settles), and a welcome message is emitted with the
// grant, in the same transaction.
func Example() {
	seats := effect.NewCounter("seats",
		`INSERT INTO seat_pools AS p (tenant_id, account_id, used)
		 SELECT t::uuid, k, d FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS c(k, d, t, n) ORDER BY n
		 ON CONFLICT (tenant_id, account_id) DO UPDATE SET used = p.used + EXCLUDED.used`, "")

	group := effect.Group{
		Name:  "invitations",
		Types: []string{"api.invitation.accepted"},
		Handler: effect.Each(func(ctx context.Context, tx *effect.Tx, e effect.Event[Invited]) error {
			key := e.BusinessKey(e.Payload.InvitationID, "grant-seats")
			made, err := effect.Once(ctx, tx,
				`INSERT INTO seat_grants (business_key, tenant_id, account_id, seats) VALUES ($1, $2, $3, $4)
				 ON CONFLICT (business_key) DO NOTHING`,
				key, e.TenantID, e.Payload.AccountID, e.Payload.Seats)
			if err != nil || !made {
				return err // a repetition changes nothing
			}
			tx.Add(seats, e.Record, e.Payload.AccountID, e.Payload.Seats)
			tx.Emit(ctx, e.Record, effect.Intent{Type: "invitations.welcome", Key: key + "/welcome",
				ObjectType: "account", Subject: e.Payload.AccountID, Payload: e.Payload})
			return nil
		}),
	}
	fmt.Println(group.Check())
	// Output: <nil>
}

// Account is the body of a tenant's own account.updated event.
type Account struct {
	ID      string `json:"id"`
	Plan    string `json:"plan"`
	Version int64  `json:"version"`
}

// A projection guarded by its version: any arrival order of an account's
// events ends in the row of its greatest version, ties decided by the
// order Sluice accepted the events in.
func ExampleProject() {
	handler := effect.Each(func(ctx context.Context, tx *effect.Tx, e effect.Event[Account]) error {
		_, err := effect.Project(ctx, tx,
			`INSERT INTO accounts AS a (tenant_id, account_id, plan, version, inbox_id) VALUES ($1, $2, $3, $4, $5)
			 ON CONFLICT (tenant_id, account_id) DO UPDATE
			     SET plan = EXCLUDED.plan, version = EXCLUDED.version, inbox_id = EXCLUDED.inbox_id
			     WHERE (a.version, a.inbox_id) < (EXCLUDED.version, EXCLUDED.inbox_id)`,
			e.TenantID, e.Payload.ID, e.Payload.Plan, e.Payload.Version, e.InboxID)
		return err
	})
	fmt.Println(effect.Group{Name: "accounts", Types: []string{"api.account.*"}, Handler: handler}.Check())
	// Output: <nil>
}

// Once with Same: an operation asked again under its business key with
// other content is a dead letter for an operator, not silence.
func ExampleSame() {
	apply := func(ctx context.Context, tx *effect.Tx, e effect.Event[Invited]) error {
		key := e.BusinessKey(e.Payload.InvitationID, "grant-seats")
		made, err := effect.Once(ctx, tx,
			`INSERT INTO seat_grants (business_key, tenant_id, account_id, seats) VALUES ($1, $2, $3, $4)
			 ON CONFLICT (business_key) DO NOTHING`, key, e.TenantID, e.Payload.AccountID, e.Payload.Seats)
		if err != nil || made {
			return err
		}
		return effect.Same(ctx, tx, `SELECT seats = $2 FROM seat_grants WHERE business_key = $1`, key, e.Payload.Seats)
	}
	fmt.Println(effect.Group{Name: "seats", Types: []string{"api.invitation.accepted"}, Handler: effect.Each(apply)}.Check())
	// Output: <nil>
}
