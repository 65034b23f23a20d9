package standardsigned

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// Credentials are a Standard Webhooks source's API lookup: platforms that
// sign with Standard Webhooks (identity verification, feedback) publish
// no Go client, so reconciliation fetches one object by a configured REST
// call and reads its state and version with JSON pointers. Stored sealed.
type Credentials struct {
	// ObjectURL is the URL of one object, {id} standing for its id
	// (path-escaped), e.g. https://api.idv.example/v1/verifications/{id}.
	ObjectURL string `json:"object_url"`
	// AuthHeader and AuthValue authenticate the call, e.g. Authorization
	// and "Bearer sk_...".
	AuthHeader string `json:"auth_header"`
	AuthValue  string `json:"auth_value"`
	// EventType is the type the fetched state is entered as; {state} stands
	// for the state read at StatePointer ("verification.{state}"), or it is
	// fixed ("feedback.created").
	EventType string `json:"event_type"`
	// ObjectPointer is where the object is in the answer ("" : the whole
	// answer); StatePointer and VersionPointer point into the object. The
	// version is a time (RFC 3339 or unix seconds): it becomes the event's
	// timestamp, which orders it against webhooks of the same object.
	ObjectPointer  string `json:"object_pointer,omitempty"`
	StatePointer   string `json:"state_pointer,omitempty"`
	VersionPointer string `json:"version_pointer"`
}

// Base is the lookup's URL.
func (c *Credentials) Base() string { return c.ObjectURL }

// Check refuses a lookup that could not fetch an object.
func (c *Credentials) Check() error {
	switch {
	case !strings.Contains(c.ObjectURL, "{id}"):
		return errors.New("standard_webhooks API credentials: object_url must hold {id}")
	case c.AuthHeader == "" || c.AuthValue == "" || textproto.CanonicalMIMEHeaderKey(c.AuthHeader) == "":
		return errors.New("standard_webhooks API credentials: auth_header and auth_value are required")
	case c.EventType == "" || (strings.Contains(c.EventType, "{state}") && c.StatePointer == ""):
		return errors.New("standard_webhooks API credentials: event_type is required, and {state} in it needs state_pointer")
	case c.VersionPointer == "":
		return errors.New("standard_webhooks API credentials: version_pointer is required")
	}
	return nil
}

// credentialsExample is the document the refusal of one that is not
// shows.
const credentialsExample = `{"object_url":"https://api.example/v1/verifications/{id}","auth_header":"Authorization","auth_value":"Bearer ...","event_type":"verification.{state}","state_pointer":"/status","version_pointer":"/updated_at"}`

// CheckAPICredentials refuses a lookup that could not fetch an object.
func (Provider) CheckAPICredentials(raw []byte) error {
	_, err := provider.ReadCredentials[Credentials](Kind, raw, credentialsExample)
	return err
}

// OpenAPI returns the configured lookup.
func (Provider) OpenAPI(raw []byte, client *http.Client) (provider.API, error) {
	c, err := provider.ReadCredentials[Credentials](Kind, raw, credentialsExample)
	if err != nil {
		return nil, err
	}
	return api{cfg: c, client: client}, nil
}

type api struct {
	cfg    Credentials
	client *http.Client
}

func (api) Events(context.Context, provider.Window, string, func(provider.Page) error) error {
	return provider.ErrNotOffered
}

func (api) Redeliver(context.Context, provider.Window, string, func(provider.Page) error) error {
	return provider.ErrNotOffered
}

// maxObject bounds an answer: one object, not a list.
const maxObject = 1 << 20

// State fetches one object and enters it as the event its state stands
// for: a webhook-id derived from the object id, state and version (so one
// state fetched twice is one event), the version as its timestamp, and the
// object as its data.
func (a api) State(ctx context.Context, objectID string) (provider.Found, error) {
	u := strings.ReplaceAll(a.cfg.ObjectURL, "{id}", url.PathEscape(objectID))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return provider.Found{}, fmt.Errorf("object lookup: %w", err)
	}
	req.Header.Set(a.cfg.AuthHeader, a.cfg.AuthValue)
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return provider.Found{}, fmt.Errorf("object lookup %s: %w", objectID, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxObject))
	if err != nil {
		return provider.Found{}, fmt.Errorf("object lookup %s: %w", objectID, err)
	}
	if resp.StatusCode != http.StatusOK {
		return provider.Found{}, fmt.Errorf("object lookup %s: status %d", objectID, resp.StatusCode)
	}
	return a.found(objectID, body)
}

func (a api) found(objectID string, answer []byte) (provider.Found, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber() // unix seconds stay integers
	if err := dec.Decode(&doc); err != nil {
		return provider.Found{}, fmt.Errorf("object lookup %s: answer is not JSON", objectID)
	}
	obj := doc
	if a.cfg.ObjectPointer != "" {
		var ok bool
		if obj, ok = jsonptr.Get(doc, a.cfg.ObjectPointer); !ok {
			return provider.Found{}, fmt.Errorf("object lookup %s: nothing at %s", objectID, a.cfg.ObjectPointer)
		}
	}
	m, ok := obj.(map[string]any)
	if !ok {
		return provider.Found{}, fmt.Errorf("object lookup %s: the object is not a JSON object", objectID)
	}
	state := ""
	if a.cfg.StatePointer != "" {
		if state, ok = jsonptr.String(m, a.cfg.StatePointer); !ok || state == "" {
			return provider.Found{}, fmt.Errorf("object lookup %s: no state at %s", objectID, a.cfg.StatePointer)
		}
	}
	version, err := readVersion(m, a.cfg.VersionPointer)
	if err != nil {
		return provider.Found{}, fmt.Errorf("object lookup %s: %w", objectID, err)
	}
	m["id"] = objectID // data.id is where a webhook names its object
	typ := strings.ReplaceAll(a.cfg.EventType, "{state}", state)
	stamp := version.UTC().Format(time.RFC3339Nano)
	body, err := json.Marshal(map[string]any{"type": typ, "timestamp": stamp, "data": m})
	if err != nil {
		return provider.Found{}, err
	}
	sum := sha256.Sum256([]byte(objectID + "\x00" + typ + "\x00" + stamp))
	h := http.Header{}
	h.Set(signature.StandardIDHeader, "sluice_reconcile_"+hex.EncodeToString(sum[:16]))
	return provider.Found{Header: h, Body: body}, nil
}

// readVersion reads an RFC 3339 or unix-seconds time.
func readVersion(obj any, ptr string) (time.Time, error) {
	s, ok := jsonptr.String(obj, ptr)
	if !ok {
		return time.Time{}, fmt.Errorf("no version at %s", ptr)
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil && secs > 0 {
		return time.Unix(secs, 0), nil
	}
	return time.Time{}, fmt.Errorf("version at %s is neither RFC 3339 nor unix seconds", ptr)
}
