package catalog

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/schemas"
)

// maxExamples bounds the refused events an incompatibility names.
const maxExamples = 5

// checkCompatible validates the held payloads of the events the previous
// version accepted against the new one, newest first, at most
// CompatCheckLimit of them, and returns how many it checked; any it would
// refuse make it an IncompatibleError with their count. It runs outside
// any transaction: events accepted while it runs are not checked (the new
// version takes effect within the ingest cache time anyway).
func (s *Store) checkCompatible(ctx context.Context, next *schemas.Entry, prev *latest) (int, error) {
	const page = 1000
	var (
		checked, refused int
		examples         []Refusal
		below            int64 = math.MaxInt64
	)
	for checked < s.cfg.CompatCheckLimit {
		rows, err := s.pool.Query(ctx, acceptedSQL, prev.versionID, below, min(page, s.cfg.CompatCheckLimit-checked))
		if err != nil {
			return 0, fmt.Errorf("read accepted events: %w", err)
		}
		n := 0
		var (
			id      int64
			eventID string
			body    []byte
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &eventID, &body}, func() error {
			n++
			checked++
			below = id
			if reason := accepts(next, body); reason != "" {
				refused++
				if len(examples) < maxExamples {
					examples = append(examples, Refusal{InboxID: id, EventID: eventID, Reason: reason})
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("read accepted events: %w", err)
		}
		if n < page {
			break
		}
	}
	if refused > 0 {
		return checked, &IncompatibleError{Refused: refused, Checked: checked, Examples: examples, Message: fmt.Sprintf(
			"%s.%s v%d would refuse %d of the %d stored events v%d accepted (first: %s); fix the schema, or create it with compatible=false (--compatible=false) to accept the break",
			next.Kind, next.Type, prev.version+1, refused, checked, prev.version, examples[0].Reason)}
	}
	return checked, nil
}

// accepts says why e would not publish a stored body, or "": the schema
// refuses it, or a JSON pointer of e finds no object id or no readable
// time. A header location cannot be judged from a stored body and is left
// out.
func accepts(e *schemas.Entry, body []byte) string {
	doc, err := parse(body)
	if err != nil {
		return err.Error()
	}
	if err := e.ValidateDoc(doc); err != nil {
		return err.Error()
	}
	_, _, problem := locate(e, doc, "", nil)
	return problem
}
