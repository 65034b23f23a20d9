// Package portallink keeps portal links: an operator's backend asks the
// admin API for a link that signs one visitor into one tenant's view of the
// console, served on the portal listener (never the admin one).
//
// The invariants it keeps:
//   - a link's secret (32 random bytes) is shown once, in the link's URL
//     fragment, which browsers never send to a server nor in a Referer; only
//     its SHA-256 is kept (migrations/00040_portal_links.sql), and it is
//     never logged;
//   - a link is used at most once: its use claims the row (used_at) in the
//     transaction that makes the session's token, so of two uses racing one
//     wins and the other is refused;
//   - an unused link expires after its TTL (DefaultTTL, at most MaxTTL);
//   - its use makes a token scoped to the link's tenant, with the link's
//     portal scope, role read (access read) or operate (access manage), and
//     a lifetime of at most MaxSession: the session cannot outlive it, and
//     revoking the token ends the session;
//   - every minting and every use, refused ones included, is audited
//     (portal_link.create, portal_link.use);
//   - a link is deleted a day after it expired (by a later minting); the
//     audit trail keeps its id.
package portallink

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	//go:embed sql/link_create.sql
	createSQL string
	//go:embed sql/link_claim.sql
	claimSQL string
	//go:embed sql/link_refused.sql
	refusedSQL string
	//go:embed sql/link_used.sql
	usedSQL string
	//go:embed sql/link_get.sql
	getSQL string
)

// OpenPath is the portal's page a link opens (on the portal listener):
// GET shows a page whose script posts the fragment's secret back to it;
// only that POST uses the link.
const OpenPath = "/console/portal/open"

// Lifetimes: of an unused link (its default and longest), and of the
// session its use starts (the longest, and the default).
const (
	DefaultTTL = 10 * time.Minute
	MaxTTL     = time.Hour
	MaxSession = time.Hour
)

// Access is what a portal session may do within its scope.
type Access string

const (
	// AccessRead reads (no payloads) and never acts: its token has role
	// read.
	AccessRead Access = "read"
	// AccessManage also acts, and reads the payloads its scope shows: its
	// token has role operate.
	AccessManage Access = "manage"
)

// Role is the role of the token a link with this access makes.
func (a Access) Role() admintoken.Role {
	if a == AccessManage {
		return admintoken.RoleOperate
	}
	return admintoken.RoleRead
}

// Link is a link's record, never its secret.
type Link struct {
	ID             string                 `json:"id" format:"uuid"`
	TenantID       string                 `json:"tenant_id" format:"uuid"`
	Scope          admintoken.PortalScope `json:"scope" enum:"destinations,tenant" doc:"destinations: the tenant's endpoints and deliveries only; tenant: the tenant's whole view."`
	Access         Access                 `json:"access" enum:"read,manage" doc:"read: look only (no payloads, no actions); manage: also act, and read the payloads the scope shows."`
	SessionSeconds int64                  `json:"session_seconds" doc:"How long the session the link starts lasts, at most 3600."`
	CreatedAt      time.Time              `json:"created_at"`
	ExpiresAt      time.Time              `json:"expires_at" doc:"When the link expires unused."`
	// UsedAt and SessionTokenID are set once the link is used (Get).
	UsedAt         *time.Time `json:"used_at,omitempty" doc:"When the link was used; absent: not yet."`
	SessionTokenID string     `json:"session_token_id,omitempty" format:"uuid" doc:"The admin token of the session the link's use started (revoke it to end the session)."`
}

// New describes a link to mint.
type New struct {
	TenantID string
	Scope    admintoken.PortalScope
	Access   Access
	TTL      time.Duration // 0: DefaultTTL
	Session  time.Duration // 0: MaxSession
}

// Store mints and uses links.
type Store struct {
	Pool *pgxpool.Pool
	// Actor is recorded with every link minted, in the same transaction;
	// nil records nothing.
	Actor *audit.Actor
}

// Mint makes a link and returns its record and its secret, which cannot be
// shown again.
func (s Store) Mint(ctx context.Context, n New) (Link, string, error) {
	if err := n.check(); err != nil {
		return Link{}, "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Link{}, "", fmt.Errorf("portal link: %w", err)
	}
	secret := base64.RawURLEncoding.EncodeToString(raw)
	var creator *string
	if s.Actor != nil && s.Actor.TokenID != "" {
		creator = &s.Actor.TokenID
	}
	var l Link
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, createSQL, n.TenantID, string(n.Scope), string(n.Access), digest(secret),
			int64(n.Session/time.Second), creator, n.TTL.Seconds())
		if err != nil {
			return err
		}
		if l, err = pgx.CollectExactlyOneRow(rows, scan); err != nil {
			return err
		}
		return s.Actor.Record(ctx, tx, audit.Target{Action: "portal_link.create", Resource: "portal_link", ID: l.ID, TenantID: l.TenantID})
	})
	if name, ok := pg.Violation(err); ok && name == "portal_links_tenant_id_fkey" {
		return Link{}, "", refusal.NoSuch("tenant", n.TenantID)
	}
	if err != nil {
		return Link{}, "", fmt.Errorf("mint portal link: %w", err)
	}
	return l, secret, nil
}

func (n *New) check() error {
	if !input.IsUUID(n.TenantID) {
		return refusal.NoSuch("tenant", n.TenantID)
	}
	if _, err := admintoken.ParsePortalScope(string(n.Scope)); err != nil {
		return refusal.New(refusal.Invalid, "scope %q: want destinations or tenant", n.Scope)
	}
	if n.Access != AccessRead && n.Access != AccessManage {
		return refusal.New(refusal.Invalid, "access %q: want read or manage", n.Access)
	}
	n.TTL = cmpOr(n.TTL, DefaultTTL)
	n.Session = cmpOr(n.Session, MaxSession)
	if err := input.Lifetime("expires_in_seconds", n.TTL, MaxTTL); err != nil {
		return err
	}
	if err := input.Lifetime("session_seconds", n.Session, MaxSession); err != nil {
		return err
	}
	if n.Session%time.Second != 0 || n.Session < time.Second {
		return refusal.New(refusal.Invalid, "session_seconds: a whole number of seconds")
	}
	return nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func scan(row pgx.CollectableRow) (Link, error) {
	var l Link
	err := row.Scan(&l.ID, &l.TenantID, &l.Scope, &l.Access, &l.SessionSeconds, &l.CreatedAt, &l.ExpiresAt)
	return l, err
}

func digest(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// Get returns one link's record.
func (s Store) Get(ctx context.Context, id string) (Link, error) {
	if !input.IsUUID(id) {
		return Link{}, refusal.NoSuch("portal link", id)
	}
	var l Link
	err := s.Pool.QueryRow(ctx, getSQL, id).Scan(&l.ID, &l.TenantID, &l.Scope, &l.Access, &l.SessionSeconds, &l.CreatedAt, &l.ExpiresAt,
		&l.UsedAt, &l.SessionTokenID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Link{}, refusal.NoSuch("portal link", id)
	}
	if err != nil {
		return Link{}, fmt.Errorf("read portal link: %w", err)
	}
	return l, nil
}

// Owner is the tenant of the link id names (the admin API confines its
// routes by it).
func (s Store) Owner(ctx context.Context, id string) (string, error) {
	l, err := s.Get(ctx, id)
	return l.TenantID, err
}

// Errors of Use: the link is not there, was used, or expired unused.
var (
	ErrUnknown = refusal.Sub(refusal.NotFound, "unknown_portal_link", "no such portal link")
	ErrUsed    = refusal.Sub(refusal.Conflict, "used_portal_link", "this portal link was used already: ask for a new one")
	ErrExpired = refusal.Sub(refusal.Forbidden, "expired_portal_link", "this portal link expired unused: ask for a new one")
)

// Session is what a link's use starts: the token the session acts with
// (shown to nobody: the console seals it in its session) and its record.
type Session struct {
	Link   Link
	Token  admintoken.Token
	Secret string
}

// Use claims the link whose secret is given and makes its session's token,
// in one transaction with its audit record; a refused use is audited too
// (under the token that minted the link), but for an unknown secret, which
// names no link and no tenant.
func (s Store) Use(ctx context.Context, secret string) (Session, error) {
	if secret == "" || len(secret) > 64 || strings.ContainsAny(secret, "=+/ ") {
		return Session{}, ErrUnknown
	}
	var out Session
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, claimSQL, digest(secret))
		if err != nil {
			return err
		}
		if out.Link, err = pgx.CollectExactlyOneRow(rows, scan); err != nil {
			return err
		}
		out.Token, out.Secret, err = admintoken.Store{}.CreateIn(ctx, tx, admintoken.New{
			Name: "portal link " + out.Link.ID, Role: out.Link.Access.Role(), TenantID: out.Link.TenantID,
			TTL: time.Duration(out.Link.SessionSeconds) * time.Second, Portal: out.Link.Scope})
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, usedSQL, out.Link.ID, out.Token.ID); err != nil {
			return err
		}
		actor := &audit.Actor{TokenID: out.Token.ID}
		return actor.Record(ctx, tx, audit.Target{Action: "portal_link.use", Resource: "portal_link", ID: out.Link.ID, TenantID: out.Link.TenantID})
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, s.refused(ctx, secret)
	}
	if err != nil {
		return Session{}, fmt.Errorf("use portal link: %w", err)
	}
	return out, nil
}

// refused is why a link was not claimed, audited.
func (s Store) refused(ctx context.Context, secret string) error {
	var id, tenant, creator string
	var used bool
	err := s.Pool.QueryRow(ctx, refusedSQL, digest(secret)).Scan(&id, &tenant, &creator, &used)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrUnknown
	}
	if err != nil {
		return fmt.Errorf("use portal link: %w", err)
	}
	why, outcome := ErrExpired, audit.OutcomeForbidden
	if used {
		why, outcome = ErrUsed, audit.OutcomeConflict
	}
	actor := &audit.Actor{TokenID: creator}
	if err := actor.Refused(ctx, s.Pool, audit.Target{Action: "portal_link.use", Resource: "portal_link", ID: id, TenantID: tenant}, outcome); err != nil {
		return fmt.Errorf("use portal link: %w", err)
	}
	return why
}
