package schemas_test

import (
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// Every shipped type has a minimal example its schema accepts (Example
// validates what it returns).
func TestEveryShippedTypeHasAMinimalExample(t *testing.T) {
	t.Parallel()
	c, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, kind := range c.Kinds() {
		for _, typ := range c.Types(kind) {
			e, _ := c.Lookup(kind, typ)
			if _, err := e.Example(); err != nil {
				t.Errorf("%s.%s: %v", kind, typ, err)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no shipped type")
	}
}
