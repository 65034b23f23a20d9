package admin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/yaml"
	"github.com/gin-gonic/gin"
)

// The documents: the OpenAPI 3.1 document (JSON and YAML) and its OpenAPI
// 3.0 rendering for the tools that read only 3.0 (oapi-codegen among
// them). huma's own 3.0 rendering keeps what 3.0 refuses (its
// patternDescription keyword, a $ref beside a description), so this
// package serves all four itself, without a token, each built once on
// its first request (every operation is registered by then).

// documentPaths are the four renderings, by path.
var documentPaths = map[string]struct {
	contentType string
	render      func(*huma.OpenAPI) ([]byte, error)
}{
	Prefix + "/openapi.json":     {"application/openapi+json", func(o *huma.OpenAPI) ([]byte, error) { return json.Marshal(o) }},
	Prefix + "/openapi.yaml":     {"application/openapi+yaml", func(o *huma.OpenAPI) ([]byte, error) { return o.YAML() }},
	Prefix + "/openapi-3.0.json": {"application/openapi+json", Downgrade},
	Prefix + "/openapi-3.0.yaml": {"application/openapi+yaml", func(o *huma.OpenAPI) ([]byte, error) { return asYAML(Downgrade(o)) }},
}

// serveDocuments registers the documents' routes on e (GET and HEAD).
func (a *API) serveDocuments(e *gin.Engine) {
	for path, d := range documentPaths {
		var (
			once     sync.Once
			rendered []byte
			err      error
		)
		serve := func(c *gin.Context) {
			once.Do(func() { rendered, err = d.render(a.api.OpenAPI()) })
			if err != nil {
				a.log.ErrorContext(c.Request.Context(), "admin document", "path", path, "error", err)
				writeProblem(c, newProblem(http.StatusInternalServerError, "the document could not be rendered; the process log has the details"))
				return
			}
			c.Data(http.StatusOK, d.contentType, rendered)
		}
		e.GET(path, serve)
		e.HEAD(path, serve)
	}
}

// Downgrade is o rendered as OpenAPI 3.0.3: huma's downgrade (type arrays
// with null become nullable, exclusive bounds booleans, examples one
// example), then what 3.0 allows only otherwise: a keyword 3.0 does not
// know (huma's patternDescription, JSON Schema 2019's dependentRequired)
// becomes its x- extension, and a $ref with sibling
// keywords (3.0 ignores them) is wrapped in an allOf that keeps them.
func Downgrade(o *huma.OpenAPI) ([]byte, error) {
	raw, err := o.Downgrade()
	if err != nil {
		return nil, fmt.Errorf("downgrade: %w", err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("downgrade: %w", err)
	}
	doc = to30(doc)
	return json.Marshal(doc)
}

// to30 rewrites one value of a downgraded document (see Downgrade).
func to30(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			v[k] = to30(sub)
		}
		for _, k := range []string{"patternDescription", "dependentRequired"} {
			if kept, ok := v[k]; ok {
				delete(v, k)
				v["x-"+k] = kept
			}
		}
		if ref, ok := v["$ref"]; ok && len(v) > 1 {
			delete(v, "$ref")
			v["allOf"] = []any{map[string]any{"$ref": ref}}
		}
		return v
	case []any:
		for i, sub := range v {
			v[i] = to30(sub)
		}
	}
	return v
}

// asYAML is a JSON rendering as YAML.
func asYAML(raw []byte, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := yaml.Convert(&buf, bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	return buf.Bytes(), nil
}
