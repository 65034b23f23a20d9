package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLength is the longest endpoint URL CheckURL accepts.
const MaxURLLength = 2048

// CheckURL is the static check of an endpoint URL at its creation: an
// absolute http(s) URL (http only when allowHTTP), with a host, without
// userinfo or fragment, at most MaxURLLength long. A host that is an IP
// literal, in any spelling Go or a libc resolver accepts, must pass Check;
// a name is left to dial time, where what it resolves to is checked. The
// errors are one-line sentences a tenant can act on; a refused address
// also wraps ErrRefusedAddress.
func (p Policy) CheckURL(raw string, allowHTTP bool) (*url.URL, error) {
	u, err := parseEndpoint(raw, allowHTTP)
	if err != nil {
		return nil, err
	}
	if a, ok := ipLiteral(u.Hostname()); ok {
		if err := p.Check(a); err != nil {
			return nil, fmt.Errorf("the URL's host %s is not allowed: %w", u.Hostname(), err)
		}
	}
	return u, nil
}

func parseEndpoint(raw string, allowHTTP bool) (*url.URL, error) {
	if len(raw) > MaxURLLength {
		return nil, fmt.Errorf("the URL is %d bytes long, more than %d", len(raw), MaxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("the URL cannot be parsed")
	}
	if err := checkScheme(u.Scheme, allowHTTP); err != nil {
		return nil, err
	}
	if err := checkParts(u, raw); err != nil {
		return nil, err
	}
	return u, nil
}

func checkScheme(scheme string, allowHTTP bool) error {
	switch {
	case scheme == "https":
		return nil
	case scheme == "http" && allowHTTP:
		return nil
	case scheme == "http":
		return errors.New("the URL must use https")
	case allowHTTP:
		return errors.New("the URL must start with https:// or http://")
	}
	return errors.New("the URL must start with https://")
}

func checkParts(u *url.URL, raw string) error {
	switch {
	case u.Hostname() == "":
		return errors.New("the URL has no host")
	case u.User != nil:
		return errors.New("the URL must not contain a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("the URL must not have a fragment (#...)")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("the URL's port %s is not between 1 and 65535", port)
		}
	}
	return nil
}

// ipLiteral parses host as an IP address the way a resolver might: the
// forms net/netip accepts (IPv6 with or without zone, dotted decimal IPv4),
// and the inet_aton(3) forms a libc resolver also turns into an address
// without asking DNS: one to four parts, each decimal, octal (leading 0) or
// hex (0x), the last filling the remaining bytes (127.1, 2130706433,
// 0x7f.0.0.1, 0177.0.0.1). One trailing dot is ignored.
func ipLiteral(host string) (netip.Addr, bool) {
	host = strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true
	}
	return parseInetAton(host)
}

func parseInetAton(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for _, part := range parts[:len(parts)-1] {
		n, ok := atonPart(part)
		if !ok || n > 0xff {
			return netip.Addr{}, false
		}
		v = v<<8 | n
	}
	// The last part fills the bytes the others left: 127.1 is 127.0.0.1.
	bits := 8 * (5 - len(parts))
	n, ok := atonPart(parts[len(parts)-1])
	if !ok || n >= 1<<bits {
		return netip.Addr{}, false
	}
	v = v<<bits | n
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// atonPart parses one part of an inet_aton address: 0x hex, 0 octal, or
// decimal, digits only.
func atonPart(s string) (uint64, bool) {
	base := 10
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" {
		return 0, false
	}
	// ParseUint with an explicit base takes digits only: no sign, no _.
	n, err := strconv.ParseUint(s, base, 32)
	return n, err == nil
}
