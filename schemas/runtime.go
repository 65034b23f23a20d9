package schemas

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sluicehq/sluice/internal/refusal"
)

// ErrRemoteRef: a schema held at run time refers to a document outside
// itself. Nothing is ever fetched while compiling (a schema naming a URL
// would make every instance call it, and a file: URL would read the
// server's disk), so such a schema cannot be compiled.
var ErrRemoteRef = refusal.Sub(refusal.Invalid, "remote_ref", "schema refers to a document outside itself ($ref to another URL); put the definition under $defs and refer to it as #/$defs/<name>")

// Compile compiles a schema held at run time (a tenant's event type) for e,
// which says everything else about the type: the schema must be JSON Schema
// 2020-12 (the default when it names no $schema), self-contained (every $ref
// inside the document; ErrRemoteRef otherwise), and gets the same plain
// int64 rule as the built-in schemas. id names the schema in errors and is
// the base its relative references resolve against; it must be an absolute
// URL, hierarchical so a relative $ref resolves to another document (and is
// refused) rather than back into this one.
func Compile(e Entry, id string, raw []byte) (*Entry, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("schema must be a JSON object")
	}
	if d, ok := obj["$schema"].(string); ok && strings.TrimSuffix(d, "#") != jsonschema.Draft2020.String() {
		return nil, fmt.Errorf("schema must be JSON Schema 2020-12 ($schema %q, or none), not %q", jsonschema.Draft2020.String(), d)
	}
	if d, ok := obj["$schema"]; ok {
		if _, text := d.(string); !text {
			return nil, errors.New("schema: $schema must be a string")
		}
	}
	compiler := newCompiler()
	compiler.UseLoader(refuseLoader{})
	if err := compiler.AddResource(id, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := compiler.Compile(id)
	if err != nil {
		return nil, fmt.Errorf("schema does not compile: %s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	e.schema, e.quick = sch, compileQuick(sch)
	return &e, nil
}

// refuseLoader loads nothing: see ErrRemoteRef. The 2020-12 metaschemas
// are built into the validator and never reach a loader.
type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, ErrRemoteRef }
