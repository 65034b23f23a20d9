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
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed */*.json
var files embed.FS

// Entry describes one event type.
type Entry struct {
	Kind       string `json:"kind"`       // provider kind (internal/provider.Kind): stripe, github, standard_webhooks, hmac, api, ...
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
	// DataSchema, VersionID and Tenant are set on a tenant's own type
	// (Compile): the URI records carry as ce_dataschema, the catalogue
	// version row that validated an event, and the only tenant whose events
	// it applies to. Built-in entries leave them zero.
	DataSchema string `json:"-"`
	VersionID  int64  `json:"-"`
	Tenant     string `json:"-"`

	schema *jsonschema.Schema
	quick  *quick // nil: the schema uses a keyword the quick check does not know
	extra  bool   // a binary's own type (Load's extra), not Sluice's
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

// Load compiles every embedded schema, and those of extra: a provider kind
// kept outside this package brings its own (files named <kind>/<type>.vN.json).
func Load(extra ...fs.FS) (*Catalogue, error) {
	c := &Catalogue{entries: map[string]*Entry{}}
	compiler := newCompiler()
	var found []schemaFile
	for i, fsys := range append([]fs.FS{files}, extra...) {
		more, err := readSchemas(fsys)
		if err != nil {
			return nil, fmt.Errorf("load schemas: %w", err)
		}
		for j := range more {
			more[j].extra = i > 0
		}
		found = append(found, more...)
	}
	for _, f := range found {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.raw))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", f.path, err)
		}
		if err := compiler.AddResource(resourceURL(f.path), doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", f.path, err)
		}
	}
	for _, f := range found {
		e, err := newEntry(f, compiler)
		if err != nil {
			return nil, err
		}
		k := key(e.Kind, e.Type)
		prev, ok := c.entries[k]
		if ok && prev.extra != e.extra {
			return nil, fmt.Errorf("schema %s: %s.%s is a type of Sluice's own; name yours otherwise", f.path, e.Kind, e.Type)
		}
		if !ok || prev.Version < e.Version {
			c.entries[k] = e
		}
	}
	return c, nil
}

// newCompiler is the compiler every schema Sluice validates with goes
// through: 2020-12 unless a schema says otherwise, and the plain int64 rule.
func newCompiler() *jsonschema.Compiler {
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	compiler.RegisterVocabulary(plainInt64())
	compiler.AssertVocabs()
	return compiler
}

// newEntry reads a schema's x-sluice entry, checks it and compiles the
// schema (added to compiler already).
func newEntry(f schemaFile, compiler *jsonschema.Compiler) (*Entry, error) {
	var meta struct {
		Sluice Entry `json:"x-sluice"`
	}
	if err := json.Unmarshal(f.raw, &meta); err != nil {
		return nil, fmt.Errorf("schema %s: %w", f.path, err)
	}
	e := meta.Sluice
	if e.Kind == "" || e.Type == "" || e.ObjectType == "" || e.Topic == "" || e.Version < 1 {
		return nil, fmt.Errorf("schema %s: x-sluice needs kind, type, version, objectType and topic", f.path)
	}
	if len(e.ObjectIDVia) > 0 && e.ObjectIDPointer == "" {
		return nil, fmt.Errorf("schema %s: objectIdVia needs an objectId pointer to try first", f.path)
	}
	switch e.EventTimeFormat {
	case "", TimeUnix, TimeRFC3339, TimeUnixOrRFC3339:
	default:
		return nil, fmt.Errorf("schema %s: unknown eventTimeFormat %q", f.path, e.EventTimeFormat)
	}
	sch, err := compiler.Compile(resourceURL(f.path))
	if err != nil {
		return nil, fmt.Errorf("compile schema %s: %w", f.path, err)
	}
	e.File, e.schema, e.quick = f.path, sch, compileQuick(sch)
	e.extra = f.extra
	return &e, nil
}

// schemaFile is one schema file and where it was found.
type schemaFile struct {
	path  string
	raw   []byte
	extra bool // a binary's own (Load's extra), not Sluice's
}

func readSchemas(fsys fs.FS) ([]schemaFile, error) {
	var out []schemaFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out = append(out, schemaFile{path: p, raw: raw})
		return nil
	})
	return out, err
}

func key(kind, typ string) string { return kind + "\x00" + typ }

// Lookup finds the newest schema for a provider type.
func (c *Catalogue) Lookup(kind, typ string) (*Entry, bool) {
	e, ok := c.entries[key(kind, typ)]
	return e, ok
}

// Types lists the names of a kind's event types, sorted.
func (c *Catalogue) Types(kind string) []string {
	var out []string
	for _, e := range c.entries {
		if e.Kind == kind {
			out = append(out, e.Type)
		}
	}
	slices.Sort(out)
	return out
}

// Kinds lists the kinds that have event types, without repeats.
func (c *Catalogue) Kinds() []string { return c.distinct(func(e *Entry) string { return e.Kind }) }

// Topics lists the topic suffixes of every known type, without repeats.
func (c *Catalogue) Topics() []string { return c.distinct(func(e *Entry) string { return e.Topic }) }

func (c *Catalogue) distinct(field func(*Entry) string) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range c.entries {
		if v := field(e); !seen[v] {
			seen[v] = true
			out = append(out, v)
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
	if e.quick != nil && e.quick.check(doc) == pass {
		return nil
	}
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
