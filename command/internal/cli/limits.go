package cli

import (
	"fmt"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// The --limit flags: how many items one answer holds, bounded as the admin
// API bounds the same list, and refused as a usage error (exit 2) before
// anything connects. TestLimitsAreBoundedAsTheAPIBoundsThem holds them to
// the API's document.

// pageLimit is a --limit of a list the API pages (tenants, sources,
// workspaces, API keys, dead letters, the inbox, conflicts, the audit
// trail): 1 to 500.
type pageLimit int

func (l pageLimit) Validate() error { return checkLimit(int(l), operate.MaxLimit) }

// runLimit is the --limit of the reconciliation runs listed: 1 to 200, as
// the API's runs lists.
type runLimit int

// maxRuns is the most runs one list holds.
const maxRuns = 200

func (l runLimit) Validate() error { return checkLimit(int(l), maxRuns) }

func checkLimit(n, most int) error {
	if n < 1 || n > most {
		return fmt.Errorf("must be between 1 and %d, not %d", most, n)
	}
	return nil
}
