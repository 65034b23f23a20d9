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
	EventTimeFormat  string `json:"eventTimeFormat,omitempty"` // "unix" or "rfc3339"
	File             string `json:"-"`

	schema *jsonschema.Schema
}

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
		if err := compiler.AddResource(p, doc); err != nil {
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
		sch, err := compiler.Compile(p)
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
			return fmt.Errorf("%s v%d: %s", e.Type, e.Version, strings.ReplaceAll(verr.Error(), "\n", "; "))
		}
		return fmt.Errorf("%s v%d: %w", e.Type, e.Version, err)
	}
	return nil
}
