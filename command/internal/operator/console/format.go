package console

import (
	"fmt"
	"html/template"
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
	"verified": "good", "accepted": "good", "recovered": "good",
	"pending": "wait", "waiting": "wait", "running": "wait", "partial": "wait", "deprecated": "wait", "unhandled": "wait",
	"dry run": "wait", "budget": "wait", "incomplete": "wait", "replayed": "wait", "duplicate": "wait",
	"dead": "bad", "quarantined": "bad", "failed": "bad", "disabled": "bad", "refused": "bad", "error": "bad",
	"abandoned": "bad", "interrupted": "bad", "conflict": "bad", "forbidden": "bad", "not found": "bad", "invalid": "bad",
	"Dead": "bad", "Empty": "wait",
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
