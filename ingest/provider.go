package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// providerEvent is what ingest reads from an authenticated body: enough to
// build the event key, the resource key and the record headers. Everything
// else stays in the body, untouched.
type providerEvent struct {
	ID         string
	Type       string
	Time       time.Time
	ObjectID   string
	ObjectType string
}

var errNoEventID = errors.New("body names no event id or type")

// readEvent extracts the event fields for a source kind.
func readEvent(kind string, body []byte) (providerEvent, error) {
	switch kind {
	case "stripe":
		return readStripe(body)
	default:
		return providerEvent{}, fmt.Errorf("source kind %q is not supported yet", kind)
	}
}

func readStripe(body []byte) (providerEvent, error) {
	var e struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
		Data    struct {
			Object struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return providerEvent{}, fmt.Errorf("body is not a Stripe event: %w", err)
	}
	if e.ID == "" || e.Type == "" {
		return providerEvent{}, errNoEventID
	}
	pe := providerEvent{ID: e.ID, Type: e.Type, ObjectID: e.Data.Object.ID, ObjectType: e.Data.Object.Object}
	if e.Created > 0 {
		pe.Time = time.Unix(e.Created, 0).UTC()
	}
	return pe, nil
}
