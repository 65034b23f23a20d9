package console

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"
)

// How every page writes what it shows, one way each:
//   - a time is relative to the page's rendering ("4 min ago", "in 2 h"),
//     its exact UTC time in the element's title and datetime attribute;
//   - an id longer than a glance (a uuid, a provider's event id) is
//     shortened, the whole of it in its title and in a copy button that
//     static/console.js reveals (the CSP allows no inline script);
//   - a state is a badge whose colour says good, waiting or bad;
//   - a vocabulary word (snake_case) is written in words.
//
// No page shows raw JSON, a bare true/false/null or an ISO-8601 time.

// exactLayout is the exact time a title shows.
const exactLayout = "2006-01-02 15:04:05 UTC"

func formatFuncs(now func() time.Time) template.FuncMap {
	at := func(t time.Time) template.HTML { return timeTag(t, now()) }
	return template.FuncMap{
		"time": at,
		"ptime": func(t *time.Time) template.HTML {
			if t == nil {
				return "—"
			}
			return at(*t)
		},
		"short": shortID,
		"id":    idTag,
		"copy":  copyButton,
		"badge": badge,
		"words": words,
		"chips": chipsOf(now),
		"on":    func(page string, q url.Values) listOn { return listOn{Page: page, Query: q} },
		// seconds is an age in seconds as the largest unit that fits (the
		// oldest waiting delivery's).
		"seconds": func(sec float64) string {
			if sec < 60 {
				return fmt.Sprintf("%d s", int(sec))
			}
			return strings.TrimSuffix(relative(time.Time{}, time.Time{}.Add(time.Duration(sec*float64(time.Second)))), " ago")
		},
		// failure is an attempt's error as stored (class: detail) in words.
		"failure": func(s string) string {
			if code, ok := strings.CutPrefix(s, "status: status "); ok {
				return "the endpoint answered " + code
			}
			class, detail, ok := strings.Cut(s, ": ")
			if !ok {
				return s
			}
			return words(class) + ": " + detail
		},
		"percent": func(f *float64) string { return fmt.Sprintf("%.1f%%", *f*100) },
		"msf":     func(f *float64) string { return fmt.Sprintf("%.0f ms", *f) },
		"ms": func(n any) string {
			switch v := n.(type) {
			case *int:
				if v == nil {
					return "—"
				}
				return fmt.Sprintf("%d ms", *v)
			default:
				return fmt.Sprintf("%v ms", v)
			}
		},
	}
}

// timeTag is t relative to now, its exact UTC time in its title.
func timeTag(t, now time.Time) template.HTML {
	if t.IsZero() {
		return "—"
	}
	u := t.UTC()
	return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time>`, //nolint:gosec // a time's own digits and fixed words
		u.Format(time.RFC3339Nano), u.Format(exactLayout), relative(t, now)))
}

// relative says how far t is from now, in the largest unit that fits.
func relative(t, now time.Time) string {
	d := now.Sub(t)
	future := d < 0
	if future {
		d = -d
	}
	var s string
	switch {
	case d < 10*time.Second:
		return "just now"
	case d < time.Minute:
		s = fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		s = fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		s = fmt.Sprintf("%d h", int(d/time.Hour))
	default:
		s = fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
	if future {
		return "in " + s
	}
	return s + " ago"
}

// shortID is the start of a long id, marked as such: a uuid's first 8
// characters, any other id past 16 characters its first 12.
func shortID(s string) string {
	switch {
	case len(s) == 36 && strings.Count(s, "-") == 4:
		return s[:8] + "…"
	case len(s) > 16:
		return s[:12] + "…"
	}
	return s
}

// idTag is an id as a page shows it: shortened (the whole in its title)
// with a copy button, hidden until static/console.js gives it its click.
func idTag(s string) template.HTML {
	if s == "" {
		return "—"
	}
	short := shortID(s)
	if short == s {
		return template.HTML("<code>" + template.HTMLEscapeString(s) + "</code>") //nolint:gosec // escaped
	}
	return template.HTML(fmt.Sprintf(`<span class="id"><code title="%s">%s</code>%s</span>`, //nolint:gosec // escaped
		template.HTMLEscapeString(s), template.HTMLEscapeString(short), copyButton(s)))
}

// copyButton copies s, for an id a link shows shortened; nothing for an
// id shown whole.
func copyButton(s string) template.HTML {
	if shortID(s) == s {
		return ""
	}
	e := template.HTMLEscapeString(s)
	return template.HTML(`<button type="button" class="copy" data-copy="` + e + `" hidden>Copy<span class="visually-hidden"> ` + //nolint:gosec // escaped
		e + `</span></button>`)
}

// tones are the states a badge colours: good, waiting, bad; any other
// state is neutral.
var tones = map[string]string{
	"delivered": "good", "published": "good", "ok": "good", "enabled": "good", "active": "good", "Stable": "good",
	"verified": "good", "accepted": "good", "recovered": "good", "replayed": "good",
	"pending": "wait", "waiting": "wait", "running": "wait", "partial": "wait", "deprecated": "wait", "unhandled": "wait",
	"dry run": "wait", "budget": "wait", "incomplete": "wait", "duplicate": "wait",
	"dead": "bad", "quarantined": "bad", "failed": "bad", "disabled": "bad", "refused": "bad", "error": "bad",
	"abandoned": "bad", "interrupted": "bad", "conflict": "bad", "forbidden": "bad", "not found": "bad", "invalid": "bad",
	"Dead": "bad", "Empty": "wait",
	"ready": "good", "not ready": "bad", "failing": "bad", "paused": "wait", "open": "wait", "dismissed": "plain", "resolved": "good",
}

// badge is a state as a coloured label, in words.
func badge(state any) template.HTML {
	s := words(fmt.Sprint(state))
	if s == "" {
		return "—"
	}
	tone := tones[s]
	if tone == "" {
		tone = "plain"
	}
	return template.HTML(`<span class="badge ` + tone + `">` + template.HTMLEscapeString(s) + `</span>`) //nolint:gosec // escaped
}

// words writes a vocabulary word (snake_case, or dotted like an audit
// action) in words.
func words(s string) string {
	return strings.NewReplacer("_", " ").Replace(s)
}

// listOn is a list's page and the query it is shown with.
type listOn struct {
	Page  string
	Query url.Values
}

// chip is a filter a list is shown with, and the list without it.
type chip struct {
	Label   string
	Value   template.HTML
	Without template.URL
}

// filterLabels name a list's filters in words, in the order chips shows
// them.
var filterLabels = []struct{ name, label string }{
	{"tenant_id", "Tenant"}, {"source_id", "Source"}, {"endpoint_id", "Endpoint"}, {"token_id", "Token"},
	{"group", "Group"}, {"kind", "Kind"}, {"event_id", "Event id"}, {"object_id", "Object id"}, {"event_type", "Type"},
	{"status", "Status"}, {"state", "State"}, {"outcome", "Outcome"}, {"action", "Action"}, {"reason", "Reason contains"},
	{"disabled", "State"}, {"enabled", "State"}, {"replayed", "Replayed letters"},
	{"since", "Since"}, {"until", "Until"}, {"limit", "Per page"},
}

// chipsOf lists the filters of q (a list's query, its cursor left out)
// as chips, each with the query of the list without it.
func chipsOf(now func() time.Time) func(q url.Values) []chip {
	return func(q url.Values) []chip {
		var out []chip
		for _, f := range filterLabels {
			v := q.Get(f.name)
			if v == "" {
				continue
			}
			without := url.Values{}
			for k, vs := range q {
				if k != f.name && k != "cursor" && k != "notice" {
					without[k] = vs
				}
			}
			out = append(out, chip{Label: f.label, Value: chipValue(f.name, v, now()),
				Without: template.URL(without.Encode())}) //nolint:gosec // escaped by Encode
		}
		return out
	}
}

// chipValue is a filter's value in words: a time relative, an id
// shortened, a yes or no by what it selects.
func chipValue(name, v string, now time.Time) template.HTML {
	esc := template.HTMLEscapeString
	switch name {
	case "since", "until":
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return timeTag(t, now)
		}
	case "tenant_id", "source_id", "endpoint_id", "token_id", "event_id", "object_id":
		return template.HTML(esc(shortID(v))) //nolint:gosec // escaped
	case "disabled":
		return map[string]template.HTML{"true": "disabled", "false": "enabled"}[v]
	case "enabled":
		return map[string]template.HTML{"true": "enabled", "false": "disabled"}[v]
	case "replayed":
		return map[string]template.HTML{"true": "shown too", "false": "hidden"}[v]
	}
	return template.HTML(esc(words(v))) //nolint:gosec // escaped
}
