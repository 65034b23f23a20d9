package input_test

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/input"
)

// A front end checks what a person typed before it sends or stores it:
// the same rules the admin API states in its document.
func Example() {
	fmt.Println(input.Text("name", "Acme GmbH", input.MaxName))
	fmt.Println(input.Text("name", "evil\x1b[2J", input.MaxName))
	fmt.Println(input.UUID("tenant_id", "5B2E1D4C-0000-4000-8000-000000000000"))
	_, err := input.ID("dead_letter_id", "0")
	fmt.Println(err)
	fmt.Println(input.Lifetime("--expires", 0, 365*24*time.Hour))
	// Output:
	// <nil>
	// name: must be text without NUL or control characters
	// tenant_id: must be a canonical uuid (lowercase, 8-4-4-4-12)
	// dead_letter_id: must be a whole number of at least 1
	// --expires: must be positive and at most 8760h
}
