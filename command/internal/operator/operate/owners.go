package operate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EventTenant, DeadLetterTenant and ConflictTenant name the tenant an id
// belongs to (refusal.NotFound when there is none): what a caller that
// confines ids to a tenant before anything runs (the admin API) asks first. They
// read no payload.
func (o *Operator) EventTenant(ctx context.Context, id int64) (string, error) {
	e, err := o.event(ctx, nil, id)
	return e.TenantID, err
}

// DeadLetterTenant: see EventTenant.
func (o *Operator) DeadLetterTenant(ctx context.Context, id int64) (string, error) {
	d, err := o.findDeadLetter(ctx, nil, id)
	return d.TenantID, err
}

// ConflictTenant: see EventTenant; id is a Conflict's ID.
func (o *Operator) ConflictTenant(ctx context.Context, id string) (string, error) {
	inboxID, at, err := ParseConflictID(id)
	if err != nil {
		return "", notFound("conflict", id)
	}
	w := &where{}
	w.add("c.inbox_id = %s AND c.received_at = %s", inboxID, at)
	list, err := o.conflicts(ctx, w, 1)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", notFound("conflict", id)
	}
	return list[0].TenantID, nil
}

// ConflictID names one conflict in a single token (an inbox id and the
// newcomer's received_at, in microseconds as Postgres keeps it): what an
// API path carries.
func ConflictID(inboxID int64, receivedAt time.Time) string {
	return fmt.Sprintf("%d-%d", inboxID, receivedAt.UnixMicro())
}

// ParseConflictID reads a ConflictID back, and the dotted form ids had
// before (<inbox id>.<unix microseconds>), which read like a decimal
// number, so a link kept from then still opens.
func ParseConflictID(id string) (int64, time.Time, error) {
	sep := "-"
	if !strings.Contains(id, sep) {
		sep = "."
	}
	inbox, micros, ok := strings.Cut(id, sep)
	i, err1 := strconv.ParseInt(inbox, 10, 64)
	m, err2 := strconv.ParseInt(micros, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, time.Time{}, invalid("conflict_id", "%q is not a conflict id (<inbox id>-<received at, unix microseconds>, as a list of conflicts shows it)", id)
	}
	return i, time.UnixMicro(m).UTC(), nil
}

// ConflictByID is Conflict named by its ID (a payload read).
func (o *Operator) ConflictByID(ctx context.Context, scope *Scope, id string) (ConflictDetail, error) {
	inboxID, at, err := ParseConflictID(id)
	if err != nil {
		return ConflictDetail{}, err
	}
	return o.Conflict(ctx, scope, inboxID, at)
}
