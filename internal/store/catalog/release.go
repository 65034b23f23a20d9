package catalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/schemas"
)

// HeaderReleased marks a record published by a release rather than at
// receipt.
const HeaderReleased = "sluice_released"

// Released is what a release did.
type Released struct {
	Kind       string `json:"source_kind"`
	Type       string `json:"event_type"`
	Version    int    `json:"version"`
	DataSchema string `json:"dataschema"`
	// Released events were published: an outbox row each, their inbox rows
	// now published.
	Released int `json:"released"`
	// Quarantined events still fail the type's newest version: kept,
	// quarantined with that reason (a later version can release them).
	Quarantined int `json:"quarantined"`
	// Expired events' payloads are gone (past the payload horizon, or
	// erased): left as they were, nothing to publish.
	Expired int `json:"expired"`
}

// Release publishes the tenant's events of a type it has declared that were
// stored unhandled (before the type existed) or quarantined (before a schema
// fix): each is validated again against the newest version, then published
// (an outbox row, in acceptance order) or quarantined with the reason. Each
// event is published at most once, however many releases run, at once or
// later: rows are claimed under row locks (FOR UPDATE SKIP LOCKED) and only
// while still unhandled or quarantined. Run it once the type is visible to
// ingest (its cache time, 5 s), or again after: events stored unhandled
// meanwhile are released by the next run.
//
// The object id and time come from the version's JSON pointers; where it
// names a header, or nothing, from what was read at receipt by the source's
// defaults (headers are not stored).
func (s *Store) Release(ctx context.Context, tenantID, kind, typ string) (Released, error) {
	if err := checkTenant(tenantID); err != nil {
		return Released{}, err
	}
	l, err := s.latest(ctx, s.pool, tenantID, kind, typ)
	if err != nil {
		return Released{}, err
	}
	if l == nil {
		return Released{}, notFound(tenantID, kind, typ)
	}
	if !s.cfg.HasResourceType(l.resourceType) {
		return Released{}, invalid("resource_type", "%q has no topic in this deployment (its resource types are %v); add it with `sluice eventtype resource-types add` and restart the processes", l.resourceType, s.cfg.ResourceTypes)
	}
	entry, err := s.Compiled(ctx, tenantID, Meta{Kind: kind, Type: typ, ResourceType: l.resourceType, VersionID: l.versionID,
		Version: l.version, ObjectID: l.objectID, EventTime: l.eventTime, EventTimeFormat: l.eventTimeFormat})
	if err != nil {
		return Released{}, err
	}
	r := Released{Kind: kind, Type: typ, Version: l.version, DataSchema: entry.DataSchema}
	var after int64
	for {
		n, last, err := s.releaseBatch(ctx, tenantID, entry, after, &r)
		if err != nil {
			return r, err
		}
		if n < s.cfg.ReleaseBatch {
			return r, nil
		}
		after = last
	}
}

// held is one releasable event as stored.
type held struct {
	inboxID               int64
	sourceID, account, id string
	objectID              string
	eventTime             *time.Time
	body                  []byte
}

// releaseBatch releases the next batch after inbox id after in one
// transaction, and returns how many rows it claimed and the last id.
func (s *Store) releaseBatch(ctx context.Context, tenant string, e *schemas.Entry, after int64, r *Released) (int, int64, error) {
	var (
		n    int
		last int64
		add  Released
	)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		add, n, last = Released{}, 0, 0
		rows, err := tx.Query(ctx, releasableSQL, tenant, e.Type, e.Kind, after, s.cfg.ReleaseBatch)
		if err != nil {
			return fmt.Errorf("read releasable events: %w", err)
		}
		events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (held, error) {
			var h held
			err := row.Scan(&h.inboxID, &h.sourceID, &h.account, &h.id, &h.objectID, &h.eventTime, &h.body)
			return h, err
		})
		if err != nil {
			return fmt.Errorf("read releasable events: %w", err)
		}
		n = len(events)
		if n > 0 {
			last = events[n-1].inboxID
		}
		var pub publishArgs
		var qIDs []int64
		var qReasons []string
		for _, h := range events {
			if h.body == nil {
				add.Expired++
				continue
			}
			rec, problem := s.record(tenant, e, h)
			if problem != "" {
				qIDs, qReasons = append(qIDs, h.inboxID), append(qReasons, pg.Text(problem, maxReason))
				add.Quarantined++
				continue
			}
			pub.add(h.inboxID, rec)
			add.Released++
		}
		if len(pub.ids) > 0 {
			if _, err := tx.Exec(ctx, publishSQL, pub.ids, pub.objectIDs, pub.times, pub.topics, pub.keys, pub.headers, pub.payloads,
				e.VersionID, e.ObjectType); err != nil {
				return fmt.Errorf("publish released events: %w", err)
			}
		}
		if len(qIDs) > 0 {
			if _, err := tx.Exec(ctx, quarantineSQL, qIDs, qReasons); err != nil {
				return fmt.Errorf("quarantine released events: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	r.Released += add.Released
	r.Quarantined += add.Quarantined
	r.Expired += add.Expired
	return n, last, nil
}

// record is the outbox row of a released event, as ingest would have
// written it had the type existed at receipt; or why it cannot publish.
type record struct {
	objectID string
	time     *time.Time
	topic    string
	key      []byte
	headers  []byte
	payload  []byte
}

func (s *Store) record(tenant string, e *schemas.Entry, h held) (record, string) {
	doc, err := parse(h.body)
	if err != nil {
		return record{}, err.Error()
	}
	if err := e.ValidateDoc(doc); err != nil {
		return record{}, err.Error()
	}
	objectID, t, problem := locate(e, doc, h.objectID, h.eventTime)
	if problem != "" {
		return record{}, problem
	}
	key := envelope.Key(tenant, e.ObjectType, objectID)
	ev := envelope.Event{
		ID:            h.id,
		Source:        envelope.SourceURI(tenant, h.sourceID),
		Type:          e.Kind + "." + e.Type,
		Subject:       objectID,
		TenantID:      tenant,
		SourceAccount: h.account,
		PartitionKey:  key,
		ContentType:   "application/json",
		TraceParent:   envelope.NewTraceParent(),
		DataSchema:    e.DataSchema,
	}
	if t != nil {
		ev.Time = *t
	}
	headers := ev.Headers()
	headers[HeaderReleased] = "true"
	rec := record{objectID: objectID, time: t, topic: s.cfg.Topics.Resource(e.Topic), key: []byte(key), headers: envelope.OutboxHeaders(headers)}
	if len(h.body) <= envelope.MaxInlineBody {
		rec.payload = h.body // otherwise by claim: the relay names the inbox row
	}
	return rec, ""
}

type publishArgs struct {
	ids                     []int64
	objectIDs, topics       []string
	times                   []*time.Time
	keys, headers, payloads [][]byte
}

func (p *publishArgs) add(id int64, r record) {
	p.ids = append(p.ids, id)
	p.objectIDs = append(p.objectIDs, r.objectID)
	p.times = append(p.times, r.time)
	p.topics = append(p.topics, r.topic)
	p.keys = append(p.keys, r.key)
	p.headers = append(p.headers, r.headers)
	p.payloads = append(p.payloads, r.payload)
}

// parse reads a stored body as ingest does: numbers kept as written.
func parse(body []byte) (any, error) {
	var doc any
	rest, err := json.Parse(body, &doc, json.UseNumber)
	if err != nil || len(rest) > 0 {
		return nil, errors.New("body is not JSON")
	}
	return doc, nil
}

// locate reads the object id and the event time where e's JSON pointers
// say; for a header location, or none, it keeps what was read at receipt
// (storedObject, storedTime), which compat checks pass as unknown ("", nil:
// not judged). problem says why the event cannot publish.
func locate(e *schemas.Entry, doc any, storedObject string, storedTime *time.Time) (string, *time.Time, string) {
	objectID, t := storedObject, storedTime
	judgeObject := storedObject != ""
	if isPointer(e.ObjectIDPointer) {
		objectID, _ = jsonptr.String(doc, e.ObjectIDPointer)
		judgeObject = true
	}
	if judgeObject && objectID == "" {
		return "", nil, fmt.Sprintf("%s: no object id at %s", e.Type, e.ObjectIDPointer)
	}
	if isPointer(e.EventTimePointer) {
		parsed, err := jsonptr.Time(doc, e.EventTimePointer, e.EventTimeFormat)
		if err != nil {
			return "", nil, fmt.Sprintf("%s: %v", e.Type, err)
		}
		t = nil
		if !parsed.IsZero() {
			t = &parsed
		}
	}
	return objectID, t, ""
}

func isPointer(loc string) bool { return len(loc) > 0 && loc[0] == '/' }

// maxReason bounds a quarantine reason, as ingest does.
const maxReason = 2000
