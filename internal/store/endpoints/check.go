package endpoints

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/eventfilter"
)

// Bounds of what an endpoint holds.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 500
	MaxHeaders           = 20
	// MaxHeaderBytes bounds an endpoint's static headers, names and
	// values together.
	MaxHeaderBytes = 4096
)

// checkURL judges an endpoint's URL: absolute, https (http too when the
// deployment allows it), a host, no user info, no fragment, at most
// MaxURLLength bytes; then the store's CheckURL, the deployment's policy.
func (s Store) checkURL(raw string) error {
	switch {
	case raw == "":
		return invalid("url", "an endpoint needs a URL")
	case len(raw) > MaxURLLength:
		return invalid("url", "must be at most %d bytes", MaxURLLength)
	case !text(raw):
		return invalid("url", "must be text without spaces, NUL or control characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return invalid("url", "must be an absolute URL (https://host/path)")
	}
	if err := s.checkParts(u, raw); err != nil {
		return err
	}
	if s.CheckURL != nil {
		if err := s.CheckURL(raw); err != nil {
			return invalid("url", "%s", err.Error())
		}
	}
	return nil
}

// checkParts judges a parsed URL's scheme, host, user info and fragment.
func (s Store) checkParts(u *url.URL, raw string) error {
	switch {
	case u.Scheme == "http" && !s.Limits.AllowHTTP:
		return invalid("url", "must be https: this deployment refuses plain http (its setting --delivery-allow-http, SLUICE_DELIVERY_ALLOW_HTTP)")
	case u.Scheme != "https" && u.Scheme != "http":
		return invalid("url", "must be https")
	case u.Hostname() == "":
		return invalid("url", "must name a host")
	case u.User != nil:
		return invalid("url", "must not hold a user or password: send credentials as a static header (Authorization)")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return invalid("url", "must not have a fragment (#...)")
	}
	return nil
}

// text says whether v is UTF-8 without spaces, NUL or control characters.
func text(v string) bool {
	if !utf8.ValidString(v) {
		return false
	}
	return !strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r >= 0x7f && r <= 0x9f })
}

func checkDescription(d string) error {
	switch {
	case !utf8.ValidString(d) || strings.ContainsFunc(d, func(r rune) bool { return r < ' ' || r >= 0x7f && r <= 0x9f }):
		return invalid("description", "must be text without NUL or control characters")
	case utf8.RuneCountInString(d) > MaxDescriptionLength:
		return invalid("description", "must be at most %d characters", MaxDescriptionLength)
	}
	return nil
}

// checkFilters judges an endpoint's filters and returns them without
// repeats, in their order.
func checkFilters(filters []string) ([]string, error) {
	if len(filters) == 0 {
		return nil, invalid("filters", "an endpoint needs at least one filter (\"*\" takes every event)")
	}
	var out []string
	for _, f := range filters {
		if err := CheckFilter(f); err != nil {
			return nil, invalid("filters", "%s", err.Error())
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	if len(out) > MaxFilters {
		return nil, invalid("filters", "at most %d filters", MaxFilters)
	}
	return out, nil
}

// checkExpression compiles a filter expression as the fan-out will: one
// that does not parse, names an unknown variable or yields no bool is
// refused with CEL's words and where (line:column) it went wrong. Empty is
// no expression.
func checkExpression(expr string) error {
	if expr == "" {
		return nil
	}
	if !utf8.ValidString(expr) || strings.ContainsRune(expr, 0) {
		return invalid("expression", "must be UTF-8 text without NUL")
	}
	_, err := eventfilter.Compile(expr)
	return err
}

// reserved are the headers a tenant's static headers may not set: the
// signature's and CloudEvents' (webhook-*, ce-*), those the deliverer
// writes (content-type, content-length, host, traceparent, tracestate,
// user-agent) and the hop-by-hop ones. Authorization is allowed: a
// receiver may need it.
var reserved = []string{"content-type", "content-length", "host", "traceparent", "tracestate", "user-agent",
	"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization", "proxy-connection"}

// checkHeaders judges static headers and returns them with canonical
// names. The refusals name a header, never its value.
func checkHeaders(h map[string]string) (map[string]string, error) {
	if len(h) > MaxHeaders {
		return nil, invalid("headers", "at most %d headers", MaxHeaders)
	}
	out := make(map[string]string, len(h))
	size := 0
	for name, value := range h {
		if !token(name) {
			return nil, invalid("headers", "%q is not a header name (letters, digits and !#$%%&'*+-.^_`|~)", name)
		}
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "webhook-") || strings.HasPrefix(lower, "ce-") || slices.Contains(reserved, lower) {
			return nil, invalid("headers", "%s is set by Sluice on every request; choose another header", name)
		}
		if !utf8.ValidString(value) || strings.ContainsFunc(value, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return nil, invalid("headers", "the value of %s holds a control character (CR, LF, NUL, ...)", name)
		}
		canonical := http.CanonicalHeaderKey(name)
		if _, dup := out[canonical]; dup {
			return nil, invalid("headers", "%s is given twice (header names are case-insensitive)", canonical)
		}
		out[canonical] = value
		size += len(name) + len(value)
	}
	if size > MaxHeaderBytes {
		return nil, invalid("headers", "names and values together must be at most %d bytes", MaxHeaderBytes)
	}
	return out, nil
}

// token says whether name is an HTTP token (RFC 9110 5.6.2).
func token(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}
