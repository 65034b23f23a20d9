// Package effecttest is the kit a team runs in its own CI to prove its
// effect group keeps Sluice's promises, against a real Postgres and a real
// Kafka (SLUICE_DATABASE_URL and SLUICE_KAFKA_BROKERS; the kit fails, it
// never skips, without them).
//
// The team describes its group (a Suite): the histories of objects it
// applies and, for each, the state they end in, read with a query. Run
// plays every history through Sluice's consumer runtime, or through a
// consumer of the team's own in any language (a Process), under what
// production does to a pipeline: every event delivered twice, each event
// again under another event id (a provider's retry, a reconciliation's
// repair of the same operation), histories shuffled across versions, a
// crash between an effect's commit and its offset's, a rewind to the
// earliest offset, a poison record among good ones, a shared row locked by
// another transaction, and many batches contending for shared rows. It
// fails when a state differs from the history's, a record is dead-lettered
// that should not be, or batches deadlock.
//
// The kit makes one database per test binary, with Sluice's schema and the
// suite's own migrations; call Main from TestMain so it is dropped.
package effecttest

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
)

// Main runs the tests of a binary and drops the kit's database: call it
// from TestMain.
func Main(m *testing.M) int { return consumertest.Main(m) }

// Suite describes an effect group to Run.
type Suite struct {
	// Group is the group under test: its handler, and the types it takes
	// (events of other types reach it in no scenario). Unset when Process
	// is set.
	Group effect.Group
	// Process, instead of Group, is a consumer of the team's own, in any
	// language, run as a program: the same scenarios and checks, the kit
	// starting and stopping it and reading its dead letters.
	Process *Process
	// Kind is the source kind its events come from (hmac, stripe,
	// standard_webhooks, api, ...): each scenario makes a tenant with a
	// source of that kind.
	Kind string
	// Migrations, optional, are the group's own schema (goose files at the
	// root, as for command.Migrations), applied after Sluice's.
	Migrations fs.FS
	// Setup, optional, prepares a scenario's tenant before its events (a
	// customer's workspace, stock rows).
	Setup func(tb testing.TB, f Fixture)
	// Histories are what happens to objects, each with the state it ends
	// in. Every scenario gives each history an object of its own.
	Histories []History
	// State reads the effects about object with f.DB, as a string with no
	// object id in it, so objects with the same history compare equal.
	State func(tb testing.TB, f Fixture, object string) string
	// AnyOrder: any arrival order of an object's events ends in the same
	// state (a projection ordered by version, not by arrival). Histories
	// are then also played reversed and shuffled.
	AnyOrder bool
	// Shared, when the group writes rows its objects share (a balance, a
	// stock level), plays the scenarios about them.
	Shared *Shared
	// Poison is an event about object the handler refuses for good.
	// Default: the first event of the first history, with a body that is
	// not JSON.
	Poison func(f Fixture, object string) Event
}

// Shared describes rows the group's objects share.
type Shared struct {
	// Lock is a statement that locks the shared rows of f's tenant ($1, its
	// id) in another transaction, e.g. SELECT 1 FROM stock WHERE tenant_id =
	// $1 FOR UPDATE. While it holds them the group must not stop, nor
	// dead-letter anything; once it lets go, every state is its history's.
	Lock string
}

// History is what happens to one object.
type History struct {
	Name string
	// Events are the events about object, in the order they happened.
	Events func(f Fixture, object string) []Event
	// Final is State once every event was applied, once or many times.
	Final string
}

// Event is one event of a history, as ingest publishes it.
type Event struct {
	// ID is the provider's event id.
	ID string
	// Type is {kind}.{provider type}, e.g. hmac.order.placed.
	Type string
	// ObjectType is the type of the object the event is about: with the
	// object id, the resource key whose events keep their order.
	ObjectType string
	// Object, optional, is the object the event is about when it is not
	// the history's (an event about two objects names the one whose order
	// it keeps).
	Object string
	// Time is the provider's event time; zero: now.
	Time time.Time
	// Body is the event's body, JSON.
	Body []byte
}

// Fixture is a scenario's tenant and source, and the kit's database.
type Fixture struct {
	TenantID, SourceID, Account string
	// Customer is a customer id of the tenant's, mapped to WorkspaceID
	// (Sluice's workspaces, for groups that map customers).
	Customer, WorkspaceID string
	// DB is the kit's database: Sluice's schema and the suite's.
	DB *pgxpool.Pool
}

// env is the kit's services for one test binary.
type env struct {
	*consumertest.Env
	migrated sync.Map // the suites' migrations applied, by their fs.FS
}

var shared env

// setup returns the binary's services with s's migrations applied.
func setup(tb testing.TB, s Suite) *env {
	tb.Helper()
	shared.Env = consumertest.Shared(tb)
	if s.Migrations != nil {
		once, _ := shared.migrated.LoadOrStore(s.Migrations, &sync.Once{})
		var err error
		once.(*sync.Once).Do(func() {
			err = pg.MigrateApp(context.Background(), shared.Pool, s.Migrations, slog.New(slog.DiscardHandler))
		})
		if err != nil {
			tb.Fatalf("effecttest: the suite's migrations: %v", err)
		}
	}
	return &shared
}

// fixture makes a tenant for one scenario.
func (e *env) fixture(tb testing.TB, s Suite) Fixture {
	tb.Helper()
	f := e.Tenant(tb, s.Kind)
	fx := Fixture{TenantID: f.TenantID, SourceID: f.SourceID, Account: f.Account, Customer: f.Customer, WorkspaceID: f.WorkspaceID, DB: e.Pool}
	if s.Setup != nil {
		s.Setup(tb, fx)
	}
	return fx
}

// record is ev about object, on topic, as the relay writes it.
func record(f Fixture, topic, object string, ev Event) *kgo.Record {
	if ev.Object != "" {
		object = ev.Object
	}
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	e := envelope.Event{ID: ev.ID, Source: envelope.SourceURI(f.TenantID, f.SourceID), Type: ev.Type,
		Subject: object, Time: at, TenantID: f.TenantID, SourceID: f.SourceID, SourceAccount: f.Account,
		PartitionKey: envelope.Key(f.TenantID, ev.ObjectType, object), ContentType: "application/json",
		TraceParent: envelope.NewTraceParent(), InboxID: fmt.Sprint(inboxIDs.next())}
	return consumertest.Record(topic, e, ev.Body)
}

// inboxIDs stand in for the inbox's ids: increasing in the order events
// are made, as Sluice accepts them.
var inboxIDs counter

type counter struct {
	mu sync.Mutex
	n  int64
}

func (c *counter) next() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.n = time.Now().UnixMicro() // above ids earlier runs gave
	}
	c.n++
	return c.n
}
