package catalog

import (
	"context"
	"fmt"
	"strconv"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/singleflight"

	"github.com/sluicehq/sluice/schemas"
)

// Meta is one type's newest version as ingest reads it, without its schema.
type Meta struct {
	Kind, Type, ResourceType             string
	VersionID                            int64
	Version                              int
	ObjectID, EventTime, EventTimeFormat string
}

// Types is a tenant's catalogue: the newest version of each type, by kind
// and type name (TypeKey). Ingest keeps it for its source cache time, so a
// change is seen within seconds.
func (s *Store) Types(ctx context.Context, tenantID string) (map[string]Meta, error) {
	rows, err := s.pool.Query(ctx, typesSQL, tenantID)
	if err != nil {
		return nil, fmt.Errorf("read tenant event types: %w", err)
	}
	out := map[string]Meta{}
	var m Meta
	_, err = pgx.ForEachRow(rows, []any{&m.Kind, &m.Type, &m.ResourceType, &m.VersionID, &m.Version, &m.ObjectID, &m.EventTime, &m.EventTimeFormat}, func() error {
		out[TypeKey(m.Kind, m.Type)] = m
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tenant event types: %w", err)
	}
	return out, nil
}

// TypeKey is how Types keys a type.
func TypeKey(kind, typ string) string { return kind + "\x00" + typ }

// Compiled returns the compiled schema of one version of a tenant's type,
// from a cache bounded by Config.MaxCompiled (versions are immutable, so
// nothing in it is ever stale). A miss reads the schema and compiles it
// once, however many callers wait for it.
func (s *Store) Compiled(ctx context.Context, tenantID string, m Meta) (*schemas.Entry, error) {
	return s.compiled.get(m.VersionID, func() (*schemas.Entry, error) {
		// The load serves every waiter: one caller giving up must not fail
		// the others.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		var raw []byte
		if err := s.pool.QueryRow(ctx, schemaSQL, m.VersionID).Scan(&raw); err != nil {
			return nil, fmt.Errorf("read schema of %s.%s v%d: %w", m.Kind, m.Type, m.Version, err)
		}
		e := s.schemaEntry(tenantID, m.Kind, m.Type, m.Version, m.ResourceType, m.ObjectID, m.EventTime, m.EventTimeFormat)
		e.VersionID = m.VersionID
		compiled, err := schemas.Compile(e, compileID(tenantID, m.Kind, m.Type, m.Version), raw)
		if err != nil {
			// Stored schemas compiled when they were created; one that no
			// longer does (another build) is a problem of that type only.
			return nil, invalid("schema", "%s.%s v%d: %v", m.Kind, m.Type, m.Version, err)
		}
		return compiled, nil
	})
}

// loadTimeout bounds reading one schema.
const loadTimeout = 5 * time.Second

// compiledCache keeps compiled schemas by version id.
type compiledCache struct {
	lru   *lru.Cache[int64, *schemas.Entry]
	group singleflight.Group
}

func newCompiledCache(size int) (*compiledCache, error) {
	c, err := lru.New[int64, *schemas.Entry](size)
	if err != nil {
		return nil, err
	}
	return &compiledCache{lru: c}, nil
}

func (c *compiledCache) get(versionID int64, load func() (*schemas.Entry, error)) (*schemas.Entry, error) {
	if e, ok := c.lru.Get(versionID); ok {
		return e, nil
	}
	v, err, _ := c.group.Do(strconv.FormatInt(versionID, 10), func() (any, error) {
		if e, ok := c.lru.Get(versionID); ok {
			return e, nil
		}
		e, err := load()
		if err != nil {
			return nil, err
		}
		c.lru.Add(versionID, e)
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*schemas.Entry), nil
}
