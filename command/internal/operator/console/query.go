package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// filters copies the named query parameters a page's form sent into the
// API's query: empty ones are dropped, times (RFC 3339, or a form's
// datetime-local, read as UTC) are sent as RFC 3339. The page keeps them
// in its own URL, so a filtered view can be shared.
func filters(r *http.Request, names ...string) url.Values {
	q := url.Values{}
	for _, n := range names {
		v := strings.TrimSpace(r.URL.Query().Get(n))
		if v == "" {
			continue
		}
		if n == "since" || n == "until" {
			v = apiTime(v)
		}
		q.Set(n, v)
	}
	return q
}

// apiTime reads a form's time: RFC 3339 as is, datetime-local as UTC;
// anything else is passed on for the API to refuse, naming the field.
func apiTime(v string) string {
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format(time.RFC3339)
		}
	}
	return v
}

// list is one page of an API list.
type list[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor"`
}

// listPage is what a list page's template gets: the items, the filters as
// sent (for the form and the next page's link) and the next cursor.
type listPage[T any] struct {
	Items  []T
	Query  url.Values
	Next   string
	Fields map[string]string
}

func newListPage[T any](l list[T], q url.Values) listPage[T] {
	fields := map[string]string{}
	for k := range q {
		fields[k] = q.Get(k)
	}
	q = cloneWithout(q, "cursor", "notice")
	return listPage[T]{Items: l.Items, Query: q, Next: l.NextCursor, Fields: fields}
}

func cloneWithout(q url.Values, drop ...string) url.Values {
	out := url.Values{}
	for k, v := range q {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}
