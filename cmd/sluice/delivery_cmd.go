package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// requests says a delivery's requests in one cell: each attempt's number,
// status or error class, and time, oldest first.
func requests(as []endpoints.Attempt) string {
	if len(as) == 0 {
		return "-"
	}
	parts := make([]string, len(as))
	for i, a := range as {
		what := a.ErrorClass
		if a.Status != 0 {
			what = fmt.Sprint(a.Status)
		}
		parts[i] = fmt.Sprintf("#%d %s %s", a.Attempt, what, a.At.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, ", ")
}
