// Package schemas is the event catalogue: one JSON Schema per provider event
// type and version, embedded in the binary. Ingest validates against it and
// learns from it where an event goes (its resource type and topic); the docs
// describe events from the same files.
//
// A type missing from the catalogue has no handler: ingest keeps such events
// in the inbox as unhandled, so a later handler can replay them.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed */*.json
var files embed.FS

// Entry describes one event type.
type Entry struct {
	Kind       string `json:"kind"`       // source kind: stripe, github, standard_webhooks, hmac
	Type       string `json:"type"`       // the provider's own type name
	Version    int    `json:"version"`    // schema version
	ObjectType string `json:"objectType"` // resource type, part of the resource key
	Topic      string `json:"topic"`      // topic suffix: the resource type's topic
	// Where ingest finds the object id and the event time in the body (JSON
	// pointers), when not where the kind's default puts them.
	ObjectIDPointer  string `json:"objectId,omitempty"`
	EventTimePointer string `json:"eventTime,omitempty"`
	EventTimeFormat  string `json:"eventTimeFormat,omitempty"` // one of the Time* formats
	// ObjectIDVia, when the object id pointer finds nothing, lists pointers
	// to other ids (e.g. a refunded charge's payment intent, then the
	// charge), in order of preference, that an earlier or later event
	// linked to the object (see Links). Such an event waits until one of
	// them is linked; it is never quarantined for lacking the object id.
	ObjectIDVia []string `json:"objectIdVia,omitempty"`
	// Links lists pointers to ids this event ties to its object (e.g. the
	// payment intent that paid an invoice), so events naming only those
	// ids reach the object. A "*" token stands for every element of an
	// array.
	Links []string `json:"links,omitempty"`
	File  string   `json:"-"`

	schema *jsonschema.Schema
}

// How an event time is written at its pointer.
const (
	TimeUnix    = "unix"    // a number of seconds since 1970 (the default)
	TimeRFC3339 = "rfc3339" // RFC 3339 text, fractions and offsets allowed
	// TimeUnixOrRFC3339 is either, as the JSON value says: providers such
	// as GitHub send both for one field, depending on the event.
	TimeUnixOrRFC3339 = "unix_or_rfc3339"
)

// resourceURL names an embedded schema by the $id it declares, so nothing
// about the server (its working directory) appears in a validation error.
func resourceURL(p string) string { return "https://sluice.dev/schemas/" + p }

// Catalogue is the set of known event types, newest version per type.
type Catalogue struct {
	entries map[string]*Entry
}

// Load compiles every embedded schema.
func Load() (*Catalogue, error) {
	c := &Catalogue{entries: map[string]*Entry{}}
	compiler := jsonschema.NewCompiler()
	compiler.RegisterVocabulary(plainInt64())
	compiler.AssertVocabs()
	var names []string
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		raw, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return fmt.Errorf("schema %s: %w", p, err)
		}
		if err := compiler.AddResource(resourceURL(p), doc); err != nil {
			return fmt.Errorf("schema %s: %w", p, err)
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load schemas: %w", err)
	}
	for _, p := range names {
		raw, _ := files.ReadFile(p)
		var meta struct {
			Sluice Entry `json:"x-sluice"`
		}
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf("schema %s: %w", p, err)
		}
		e := meta.Sluice
		if e.Kind == "" || e.Type == "" || e.ObjectType == "" || e.Topic == "" || e.Version < 1 {
			return nil, fmt.Errorf("schema %s: x-sluice needs kind, type, version, objectType and topic", p)
		}
		if len(e.ObjectIDVia) > 0 && e.ObjectIDPointer == "" {
			return nil, fmt.Errorf("schema %s: objectIdVia needs an objectId pointer to try first", p)
		}
		switch e.EventTimeFormat {
		case "", TimeUnix, TimeRFC3339, TimeUnixOrRFC3339:
		default:
			return nil, fmt.Errorf("schema %s: unknown eventTimeFormat %q", p, e.EventTimeFormat)
		}
		sch, err := compiler.Compile(resourceURL(p))
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", p, err)
		}
		e.File, e.schema = p, sch
		k := key(e.Kind, e.Type)
		if prev, ok := c.entries[k]; !ok || prev.Version < e.Version {
			c.entries[k] = &e
		}
	}
	return c, nil
}

func key(kind, typ string) string { return kind + "\x00" + typ }

// Lookup finds the newest schema for a provider type.
func (c *Catalogue) Lookup(kind, typ string) (*Entry, bool) {
	e, ok := c.entries[key(kind, typ)]
	return e, ok
}

// Topics lists the topic suffixes of every known type, without repeats.
func (c *Catalogue) Topics() []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range c.entries {
		if !seen[e.Topic] {
			seen[e.Topic] = true
			out = append(out, e.Topic)
		}
	}
	return out
}

// Validate checks a JSON body against the entry's schema. The error names
// what failed, for the quarantine reason; it never contains the body.
func (e *Entry) Validate(body []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return e.ValidateDoc(doc)
}

// ValidateDoc is Validate for a body already decoded the way
// encoding/json's Decoder decodes into any with UseNumber, so a caller that
// parsed the body once need not parse it again.
func (e *Entry) ValidateDoc(doc any) error {
	if err := e.schema.Validate(doc); err != nil {
		var verr *jsonschema.ValidationError
		if errors.As(err, &verr) {
			// The first line names the schema's URL, which the type and
			// version already say; the lines after it say what failed.
			msg := verr.Error()
			if _, causes, ok := strings.Cut(msg, "\n"); ok {
				msg = causes
			}
			return fmt.Errorf("%s v%d: %s", e.Type, e.Version, strings.ReplaceAll(msg, "\n", "; "))
		}
		return fmt.Errorf("%s v%d: %w", e.Type, e.Version, err)
	}
	return nil
}
