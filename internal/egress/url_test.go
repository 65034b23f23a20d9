package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckURLRefusesNonPublicIPLiteralsInEverySpelling(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://127.0.0.1/hook",
		"https://127.0.0.1:8443/hook",
		"https://10.0.0.1/",
		"https://100.64.0.1/",
		"https://169.254.169.254/latest/meta-data/",
		"https://0.0.0.0/",
		"https://[::1]/",
		"https://[::ffff:127.0.0.1]/",
		"https://[::ffff:7f00:1]/",
		"https://[fe80::1%25eth0]/",
		"https://[64:ff9b::7f00:1]/",
		"https://[2002:7f00:1::]/",
		"https://2130706433/",          // decimal 127.0.0.1
		"https://0x7f.0.0.1/",          // hex part
		"https://0x7f000001/",          // one hex part
		"https://0177.0.0.1/",          // octal part
		"https://017700000001/",        // one octal part
		"https://127.1/",               // short form: 127.0.0.1
		"https://127.0.1/",             // short form: 127.0.0.1
		"https://10.1/",                // 10.0.0.1
		"https://0/",                   // 0.0.0.0
		"https://127.0.0.1./",          // a trailing dot
		"https://0xA9.0xFE.0xA9.0xFE/", // 169.254.169.254
	} {
		t.Run(raw, func(t *testing.T) {
			t.Parallel()
			_, err := Policy{}.CheckURL(raw, false)
			if !errors.Is(err, ErrRefusedAddress) {
				t.Fatalf("CheckURL(%s) = %v, want an error wrapping ErrRefusedAddress", raw, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("CheckURL(%s) error %q is not one line", raw, err)
			}
		})
	}
}

func TestCheckURLRejectsMalformedURLsWithASentence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw, allowHTTP, want string
	}{
		{"http://example.com/", "", "must use https"},
		{"ftp://example.com/", "", "must start with https://"},
		{"ftp://example.com/", "allowHTTP", "must start with https:// or http://"},
		{"example.com/hook", "", "must start with https://"},
		{"/hook", "", "must start with https://"},
		{"https:///hook", "", "has no host"},
		{"https:example.com", "", "has no host"},
		{"https://user:pass@example.com/", "", "user name or password"},
		{"https://user@example.com/", "", "user name or password"},
		{"https://example.com/#frag", "", "fragment"},
		{"https://example.com/#", "", "fragment"},
		{"https://example.com:0/", "", "port 0"},
		{"https://example.com:70000/", "", "port 70000"},
		{"https://exa mple.com/", "", "cannot be parsed"},
		{"https://%31%32%37.0.0.1/", "", "cannot be parsed"}, // net/url takes no escapes in a host
		{"https://example.com/" + strings.Repeat("a", MaxURLLength), "", "more than 2048"},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			t.Parallel()
			_, err := Policy{}.CheckURL(c.raw, c.allowHTTP != "")
			if err == nil {
				t.Fatalf("CheckURL(%s) = nil, want an error saying %q", c.raw, c.want)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("CheckURL(%s) = %q, want one line saying %q", c.raw, err, c.want)
			}
			if errors.Is(err, ErrRefusedAddress) {
				t.Errorf("CheckURL(%s) = %v: a malformed URL is no refused address", c.raw, err)
			}
		})
	}
}

func TestCheckURLAcceptsPublicHostsAndLeavesNamesToDialTime(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw       string
		allowHTTP bool
	}{
		{"https://example.com/hook", false},
		{"https://example.com:8443/hook?tenant=1", false},
		{"http://example.com/hook", true},
		{"https://8.8.8.8/", false},
		{"https://[2606:4700:4700::1111]/", false},
		{"https://localhost/", false},     // a name: refused when it resolves to loopback
		{"https://internal.corp/", false}, // likewise
		{"https://1.2.3.4.5/", false},     // five parts is no address, so a name
		{"https://0x1g.0.0.1/", false},    // not hex, so a name
		{"https://4294967296/", false},    // past 32 bits, so a name
		{"https://" + strings.Repeat("a", MaxURLLength-len("https://.com")) + ".com", false},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			t.Parallel()
			u, err := Policy{}.CheckURL(c.raw, c.allowHTTP)
			if err != nil {
				t.Fatalf("CheckURL(%s) = %v, want nil", c.raw, err)
			}
			if u.String() == "" {
				t.Errorf("CheckURL(%s) returned an empty URL", c.raw)
			}
		})
	}
}

func TestCheckURLAllowsWhatThePolicyAllows(t *testing.T) {
	t.Parallel()
	p := Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	for _, raw := range []string{"http://127.0.0.1:8080/", "http://127.1:8080/", "http://2130706433/"} {
		if _, err := p.CheckURL(raw, true); err != nil {
			t.Errorf("CheckURL(%s) with 127/8 allowed = %v, want nil", raw, err)
		}
	}
}

// The inet_aton spellings, one table: what a libc resolver turns into an
// address without asking DNS.
func TestIPLiteralReadsInetAtonSpellings(t *testing.T) {
	t.Parallel()
	cases := []struct {
		host, want string // want "" when host is a name
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"1.2.3", "1.2.0.3"},
		{"1.65535", "1.0.255.255"},
		{"1.16777216", ""},
		{"1.2.65536", ""},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.0.0.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"},
		{"00", "0.0.0.0"},
		{"0", "0.0.0.0"},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
		{"256.0.0.1", ""},
		{"08.0.0.1", ""}, // 8 is no octal digit
		{"1..1", ""},
		{"1.2.3.4.5", ""},
		{"+1.2.3.4", ""},
		{"1_000", ""},
		{"example.com", ""},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
		{"fe80::1%eth0", "fe80::1%eth0"},
	}
	for _, c := range cases {
		t.Run(c.host, func(t *testing.T) {
			t.Parallel()
			a, ok := ipLiteral(c.host)
			switch {
			case c.want == "" && ok:
				t.Errorf("ipLiteral(%s) = %s, want a name", c.host, a)
			case c.want != "" && (!ok || a.String() != c.want):
				t.Errorf("ipLiteral(%s) = %s, %v, want %s", c.host, a, ok, c.want)
			}
		})
	}
}
