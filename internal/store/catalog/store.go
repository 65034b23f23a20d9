package catalog

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Created is what Create did.
type Created struct {
	Entry
	// New is false when the spec equals the newest version already
	// stored: nothing was written (running the same create twice is safe).
	New bool `json:"new"`
}

// latest is the newest stored version of a type.
type latest struct {
	typeID, versionID                    int64
	version                              int
	resourceType                         string
	schema                               []byte
	objectID, eventTime, eventTimeFormat string
}

func (l *latest) same(sp Spec) bool {
	return bytes.Equal(l.schema, sp.Schema) && l.objectID == sp.ObjectID && l.eventTime == sp.EventTime &&
		l.eventTimeFormat == sp.EventTimeFormat
}

// Create declares a type, or a new version of one. It is validated first
// (names, kind, pointers, resource type, schema: see Spec); a compatible new
// version is checked against the stored events the previous version
// accepted, and refused with their count (IncompatibleError) when it would
// refuse any. Ingest instances use it within their cache time (5 s).
func (s *Store) Create(ctx context.Context, sp Spec) (Created, error) {
	compiled, err := s.check(sp)
	if err != nil {
		return Created{}, err
	}
	prev, err := s.latest(ctx, s.pool, sp.TenantID, sp.Kind, sp.Type)
	if err != nil {
		return Created{}, err
	}
	checked := 0
	if prev != nil {
		if prev.resourceType != sp.ResourceType {
			return Created{}, invalid("resource_type", "%s.%s publishes %s records (topic %s); a type keeps its resource type for life, so its resources never change topic: declare a new type to move",
				sp.Kind, sp.Type, prev.resourceType, s.cfg.Topics.Tenant(prev.resourceType))
		}
		if prev.same(sp) {
			entries, err := s.entries(ctx, sp.TenantID, sp.Kind, sp.Type, true, false)
			if err != nil || len(entries) == 0 {
				return Created{}, errors.Join(err, conflict("the type changed meanwhile; run again"))
			}
			return Created{Entry: entries[0]}, nil
		}
		if sp.Compatible {
			if checked, err = s.checkCompatible(ctx, compiled, prev); err != nil {
				return Created{}, err
			}
		}
	}
	e, err := s.insert(ctx, sp, prev, checked)
	if err != nil {
		return Created{}, err
	}
	return Created{Entry: e, New: true}, nil
}

// insert stores the version under the tenant's lock: the quota and the
// version number are decided there, against what is stored then.
func (s *Store) insert(ctx context.Context, sp Spec, prev *latest, checked int) (Entry, error) {
	var e Entry
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, lockTenantSQL, sp.TenantID).Scan(new(int)); errors.Is(err, pgx.ErrNoRows) {
			return noTenant(sp.TenantID)
		} else if err != nil {
			return fmt.Errorf("lock tenant: %w", err)
		}
		now, err := s.latest(ctx, tx, sp.TenantID, sp.Kind, sp.Type)
		if err != nil {
			return err
		}
		if (now == nil) != (prev == nil) || (now != nil && now.versionID != prev.versionID) {
			return conflict("another version of %s.%s was created meanwhile; run again", sp.Kind, sp.Type)
		}
		typeID, version := int64(0), 1
		if prev != nil {
			typeID, version = prev.typeID, prev.version+1
		} else {
			err := tx.QueryRow(ctx, insertTypeSQL, sp.TenantID, sp.Kind, sp.Type, sp.ResourceType, s.cfg.MaxTypesPerTenant).Scan(&typeID)
			if errors.Is(err, pgx.ErrNoRows) {
				return ErrQuota.With("tenant %s has %d event types, as many as it may; deprecated types count too (the limit is SLUICE_MAX_EVENT_TYPES)",
					sp.TenantID, s.cfg.MaxTypesPerTenant)
			} else if err != nil {
				return fmt.Errorf("insert event type: %w", err)
			}
		}
		compatible := sp.Compatible && prev != nil
		e = Entry{ID: typeID, TenantID: sp.TenantID, Kind: sp.Kind, Type: sp.Type, Version: version,
			ResourceType: sp.ResourceType, ObjectID: sp.ObjectID, EventTime: sp.EventTime, EventTimeFormat: sp.EventTimeFormat,
			Compatible: compatible, Checked: checked, Status: StatusActive, Schema: sp.Schema}
		if err := tx.QueryRow(ctx, insertVersionSQL, typeID, version, sp.Schema, sp.ObjectID, sp.EventTime, sp.EventTimeFormat,
			compatible, checked).Scan(&e.VersionID, &e.CreatedAt); err != nil {
			return fmt.Errorf("insert event type version: %w", err)
		}
		return nil
	})
	if err != nil {
		return Entry{}, err
	}
	s.derive(&e)
	return e, nil
}

// querier is a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *Store) latest(ctx context.Context, q querier, tenant, kind, typ string) (*latest, error) {
	var l latest
	err := q.QueryRow(ctx, latestSQL, tenant, kind, typ).Scan(&l.typeID, &l.resourceType, &l.versionID, &l.version, &l.schema,
		&l.objectID, &l.eventTime, &l.eventTimeFormat)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read event type: %w", err)
	}
	return &l, nil
}

// Filter chooses what List returns.
type Filter struct {
	Kind string // "" for every kind
	// Deprecated includes deprecated types.
	Deprecated bool
}

// List returns the newest version of each of a tenant's types, by kind and
// type.
func (s *Store) List(ctx context.Context, tenantID string, f Filter) ([]Entry, error) {
	if err := checkTenant(tenantID); err != nil {
		return nil, err
	}
	return s.entries(ctx, tenantID, f.Kind, "", f.Deprecated, false)
}

// Show returns every version of one type, oldest first.
func (s *Store) Show(ctx context.Context, tenantID, kind, typ string) ([]Entry, error) {
	if err := checkTenant(tenantID); err != nil {
		return nil, err
	}
	es, err := s.entries(ctx, tenantID, kind, typ, true, true)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 || kind == "" || typ == "" {
		return nil, notFound(tenantID, kind, typ)
	}
	return es, nil
}

// Deprecate marks a type deprecated (see StatusDeprecated) and returns its
// newest version.
func (s *Store) Deprecate(ctx context.Context, tenantID, kind, typ string) (Entry, error) {
	if err := checkTenant(tenantID); err != nil {
		return Entry{}, err
	}
	var id int64
	if err := s.pool.QueryRow(ctx, deprecateSQL, tenantID, kind, typ).Scan(&id); errors.Is(err, pgx.ErrNoRows) {
		return Entry{}, notFound(tenantID, kind, typ)
	} else if err != nil {
		return Entry{}, fmt.Errorf("deprecate event type: %w", err)
	}
	es, err := s.entries(ctx, tenantID, kind, typ, true, false)
	if err != nil || len(es) == 0 {
		return Entry{}, errors.Join(err, notFound(tenantID, kind, typ))
	}
	return es[0], nil
}

func (s *Store) entries(ctx context.Context, tenant, kind, typ string, deprecated, every bool) ([]Entry, error) {
	rows, err := s.pool.Query(ctx, entriesSQL, tenant, kind, typ, deprecated, every)
	if err != nil {
		return nil, fmt.Errorf("read event types: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Entry, error) {
		var e Entry
		err := r.Scan(&e.ID, &e.VersionID, &e.TenantID, &e.Kind, &e.Type, &e.Version, &e.ResourceType,
			&e.ObjectID, &e.EventTime, &e.EventTimeFormat, &e.Compatible, &e.Checked, &e.Status, &e.Schema, &e.CreatedAt)
		s.derive(&e)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("read event types: %w", err)
	}
	return out, nil
}

// derive fills what an entry's stored fields determine.
func (s *Store) derive(e *Entry) {
	e.Topic = s.cfg.Topics.Tenant(e.ResourceType)
	e.DataSchema = envelope.DataSchemaURI(e.TenantID, e.Kind, e.Type, e.Version)
}

func checkTenant(id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return invalid("tenant", "%q is not a tenant id (a uuid, as `sluice tenant create` prints it)", id)
	}
	return nil
}

func notFound(tenant, kind, typ string) *refusal.Error {
	return refusal.New(refusal.NotFound, "tenant %s has no event type %s.%s (sluice eventtype list --tenant %s shows its types)", tenant, kind, typ, tenant)
}
