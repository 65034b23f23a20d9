package endpoints

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/envelope"
)

var (
	//go:embed sql/operational.sql
	operationalSQL string
	//go:embed sql/disable_operator.sql
	disableOperatorSQL string
)

// OperationalType is the type of an operational event: what became of one
// of a tenant's endpoints, told to the tenant's other endpoints (and the
// deployment's, when it asks) as Svix's operational webhooks are.
type OperationalType string

const (
	// EndpointFailing: every attempt to the endpoint failed for the
	// failing notice (default 1h). Once per failure streak.
	EndpointFailing OperationalType = "sluice.endpoint.failing"
	// EndpointDisabled: the endpoint was disabled: by the deliverer (it
	// answered 410, or failed for the failing horizon) or by an operator.
	// Once per disabling.
	EndpointDisabled OperationalType = "sluice.endpoint.disabled"
	// EndpointRecovered: a 2xx ended a failure streak that was told as
	// failing. Once per streak.
	EndpointRecovered OperationalType = "sluice.endpoint.recovered"
)

// OperationalTypes lists the operational event types.
func OperationalTypes() []OperationalType {
	return []OperationalType{EndpointFailing, EndpointDisabled, EndpointRecovered}
}

// operationalPrefix starts every operational event's type.
const operationalPrefix = "sluice.endpoint."

// AboutEndpoint says whether an event of type eventType and subject is an
// operational event about endpoint: one it is never delivered to, so that
// an endpoint failing never feeds on news of itself.
func AboutEndpoint(eventType, subject, endpoint string) bool {
	return subject == endpoint && strings.HasPrefix(eventType, operationalPrefix)
}

// IsOperational says whether eventType is an operational event's.
func IsOperational(eventType string) bool { return strings.HasPrefix(eventType, operationalPrefix) }

// operationalSpace names the operational source's id.
var operationalSpace = uuid.MustParse("5110ce00-d15a-4a7c-8000-000000000002")

// OperationalSourceID is the source id of operational events in the inbox:
// they come from no tenant's source, and their event key is this id, the
// endpoint (as the account) and the transition with its moment. Sources'
// ids are random (v4), so none is ever this one.
var OperationalSourceID = uuid.NewSHA1(operationalSpace, []byte("operational")).String()

// Transition is one change of an endpoint's state, told once.
type Transition struct {
	Type       OperationalType
	TenantID   string
	EndpointID string
	// At is the transition's moment as the endpoint's row holds it (the
	// disabling's disabled_at; the failing streak's failing_since for
	// failing and recovered): with the type and the endpoint, the event's
	// business key, the same whichever process writes it and however often.
	At time.Time
	// Reason is a disabling's (gone, failing, operator).
	Reason DisabledReason
	// FailingSince is the streak's first failure, if there is one.
	FailingSince *time.Time
	// LastStatus and LastErrorClass are the last failed attempt's.
	LastStatus     int
	LastErrorClass string
}

// OperationalBody is an operational event's JSON body.
type OperationalBody struct {
	Type      OperationalType `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      OperationalData `json:"data"`
}

// OperationalData is what an operational event says of its endpoint.
type OperationalData struct {
	TenantID       string         `json:"tenant_id"`
	EndpointID     string         `json:"endpoint_id"`
	Reason         DisabledReason `json:"reason,omitempty"`
	Trigger        string         `json:"trigger,omitempty"`
	FailingSince   *time.Time     `json:"failing_since,omitempty"`
	DisabledAt     *time.Time     `json:"disabled_at,omitempty"`
	RecoveredAt    *time.Time     `json:"recovered_at,omitempty"`
	LastStatus     int            `json:"last_status,omitempty"`
	LastErrorClass string         `json:"last_error_class,omitempty"`
}

// EventID is the transition's event id: its type's last word, the
// endpoint and the moment in microseconds (Postgres's precision), e.g.
// "disabled/3f0c.../1765050000123456".
func (tr Transition) EventID() string {
	return strings.TrimPrefix(string(tr.Type), operationalPrefix) + "/" + tr.EndpointID + "/" + strconv.FormatInt(tr.At.UnixMicro(), 10)
}

// body is the event's JSON body, told at now.
func (tr Transition) body(now time.Time) ([]byte, error) {
	d := OperationalData{TenantID: tr.TenantID, EndpointID: tr.EndpointID, Reason: tr.Reason, FailingSince: utc(tr.FailingSince),
		LastStatus: tr.LastStatus, LastErrorClass: tr.LastErrorClass}
	at := tr.At.UTC()
	switch tr.Type {
	case EndpointDisabled:
		d.DisabledAt, d.Trigger = &at, "automatic"
		if tr.Reason == ReasonOperator {
			d.Trigger = "manual"
		}
	case EndpointRecovered:
		now := now.UTC()
		d.RecoveredAt = &now
	}
	b, err := json.Marshal(OperationalBody{Type: tr.Type, Timestamp: now.UTC(), Data: d})
	if err != nil {
		return nil, fmt.Errorf("operational event body: %w", err)
	}
	return b, nil
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Announce writes tr's event in tx, through the same door as a webhook (an
// inbox row under its event key, its payload, its outbox row on topics'
// destinations topic, keyed by the endpoint so its events keep their
// order), and says whether it wrote it: a transition told already writes
// nothing. A recovery is written only if its streak's failing was.
func Announce(ctx context.Context, tx pgx.Tx, topics envelope.Topics, tr Transition) (bool, error) {
	now := time.Now()
	body, err := tr.body(now)
	if err != nil {
		return false, err
	}
	key := envelope.Key(tr.TenantID, "endpoint", tr.EndpointID)
	ev := envelope.Event{ID: tr.EventID(), Source: "/tenants/" + tr.TenantID + "/endpoints/" + tr.EndpointID, Type: string(tr.Type),
		Subject: tr.EndpointID, Time: tr.At, TenantID: tr.TenantID, SourceID: OperationalSourceID, SourceAccount: tr.EndpointID,
		PartitionKey: key, ContentType: "application/json", TraceParent: envelope.NewTraceParent()}
	var after *string
	if tr.Type == EndpointRecovered {
		failing := Transition{Type: EndpointFailing, EndpointID: tr.EndpointID, At: tr.At}.EventID()
		after = &failing
	}
	sum := sha256.Sum256(body)
	var wrote bool
	err = tx.QueryRow(ctx, operationalSQL, tr.TenantID, OperationalSourceID, tr.EndpointID, ev.ID, string(tr.Type), tr.At, sum[:], body,
		topics.Destinations(), []byte(key), ev.OutboxHeaders(), after).Scan(&wrote)
	if err != nil {
		return false, fmt.Errorf("announce %s of endpoint %s: %w", tr.Type, tr.EndpointID, err)
	}
	return wrote, nil
}
