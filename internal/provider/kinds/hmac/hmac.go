// Package hmac is the generic HMAC provider kind, for senders that sign with
// a plain keyed hash in a header of their choosing (signature.HMAC). Each
// source's Settings say how it signs and where its event id, type, object id
// and time are, so one kind serves many such senders.
package hmac

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Kind is the generic HMAC kind.
const Kind provider.Kind = "hmac"

// Settings are a source's configuration: the scheme, and where the event id
// and type are found. A locator is "header:<Name>" or a JSON pointer into
// the body ("/id").
type Settings struct {
	signature.HMACConfig
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	// ObjectID and EventTime are JSON pointers, used when the catalogue
	// entry for the type names none.
	ObjectID        string `json:"objectId,omitempty"`
	EventTime       string `json:"eventTime,omitempty"`
	EventTimeFormat string `json:"eventTimeFormat,omitempty"` // unix (default) or rfc3339
}

// Validate reports settings that could never authenticate or read an event.
func (s Settings) Validate() error {
	if err := s.HMACConfig.Validate(); err != nil {
		return err
	}
	for name, loc := range map[string]string{"eventId": s.EventID, "eventType": s.EventType} {
		if !strings.HasPrefix(loc, "header:") && !strings.HasPrefix(loc, "/") {
			return fmt.Errorf("hmac: %s must be header:<Name> or a JSON pointer like /id, not %q", name, loc)
		}
	}
	switch s.EventTimeFormat {
	case "", "unix", "rfc3339":
	default:
		return fmt.Errorf("hmac: eventTimeFormat must be unix or rfc3339, not %q", s.EventTimeFormat)
	}
	return nil
}

// Provider is the generic HMAC kind.
type Provider struct{}

func (Provider) Kind() provider.Kind { return Kind }

// Open requires Settings as JSON.
func (Provider) Open(settings []byte, tolerance time.Duration) (provider.Scheme, error) {
	if len(settings) == 0 {
		return provider.Scheme{}, errors.New("an hmac configuration is required for kind hmac")
	}
	var s Settings
	if err := json.Unmarshal(settings, &s); err != nil {
		return provider.Scheme{}, fmt.Errorf("hmac settings: %w", err)
	}
	if err := s.Validate(); err != nil {
		return provider.Scheme{}, err
	}
	v, err := signature.NewHMAC(s.HMACConfig, tolerance)
	if err != nil {
		return provider.Scheme{}, err
	}
	return provider.Scheme{Verifier: v, Read: s.read}, nil
}

// CheckSecret takes any secret: it is the HMAC key as-is.
func (Provider) CheckSecret(string) error { return nil }

func (s Settings) read(h http.Header, doc any) provider.Event {
	return provider.Event{
		ID:              locate(s.EventID, h, doc),
		Type:            locate(s.EventType, h, doc),
		ObjectIDPointer: s.ObjectID,
		TimePointer:     s.EventTime,
		TimeFormat:      s.EventTimeFormat,
	}
}

// locate reads a configured locator: "header:<Name>" or a JSON pointer.
func locate(loc string, h http.Header, doc any) string {
	if name, ok := strings.CutPrefix(loc, "header:"); ok {
		return h.Get(name)
	}
	s, _ := jsonptr.String(doc, loc)
	return s
}
