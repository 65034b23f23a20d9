package egress

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestCheckRefusesEveryNonPublicAddress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr, why string
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.254", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"fd12:3456::1", "private"},
		{"100.64.0.1", "CGNAT"},
		{"100.127.255.254", "CGNAT"},
		{"169.254.169.254", "link-local"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "broadcast"},
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.1", "benchmarking"},
		{"192.0.0.8", "IETF"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"240.0.0.1", "reserved"},
		{"2001:db8::1", "documentation"},
		{"2001:0:4136:e378::1", "Teredo"},
		{"fec0::1", "site-local"},
		// IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms carry the
		// IPv4 address they reach.
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:10.0.0.1", "private"},
		{"::ffff:169.254.169.254", "link-local"},
		{"::ffff:100.64.0.1", "CGNAT"},
		{"::ffff:198.18.0.1", "benchmarking"},
		{"::127.0.0.1", "embeds 127.0.0.1, which is loopback"},
		{"::10.1.2.3", "embeds 10.1.2.3, which is private"},
		{"::8.8.8.8", "IPv4-compatible"},
		{"64:ff9b::127.0.0.1", "embeds 127.0.0.1, which is loopback"},
		{"64:ff9b::a9fe:a9fe", "embeds 169.254.169.254, which is link-local"},
		{"64:ff9b:1::8.8.8.8", "local NAT64"},
		{"2002:7f00:1::1", "embeds 127.0.0.1, which is loopback"},
		{"2002:a00:1::", "embeds 10.0.0.1, which is private"},
		{"2002:6440:1::1", "embeds 100.64.0.1, which is shared address space (CGNAT)"},
		{"4000::1", "outside global unicast"},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			t.Parallel()
			err := Policy{}.Check(netip.MustParseAddr(c.addr))
			if !errors.Is(err, ErrRefusedAddress) {
				t.Fatalf("Check(%s) = %v, want an error wrapping ErrRefusedAddress", c.addr, err)
			}
			if !strings.Contains(err.Error(), c.why) {
				t.Errorf("Check(%s) = %q, want it to say %q", c.addr, err, c.why)
			}
			var re *RefusedError
			if !errors.As(err, &re) || re.Reason == "" {
				t.Errorf("Check(%s) = %#v, want a *RefusedError with a reason", c.addr, err)
			}
		})
	}
}

func TestCheckAllowsPublicAddresses(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{
		"8.8.8.8",
		"1.1.1.1",
		"93.184.215.14",
		"100.63.255.255", // just below CGNAT
		"100.128.0.0",    // just above
		"172.15.255.255",
		"172.32.0.0",
		"198.17.255.255",
		"223.255.255.255",
		"2606:4700:4700::1111",
		"2a00:1450:4001::200e",
		"::ffff:8.8.8.8",
		"64:ff9b::8.8.8.8", // NAT64 of a public address: how IPv6-only networks reach it
		"2002:808:808::1",  // 6to4 of 8.8.8.8
	} {
		t.Run(addr, func(t *testing.T) {
			t.Parallel()
			if err := (Policy{}).Check(netip.MustParseAddr(addr)); err != nil {
				t.Errorf("Check(%s) = %v, want nil", addr, err)
			}
		})
	}
}

func TestCheckAllowsWhatAllowLists(t *testing.T) {
	t.Parallel()
	p := Policy{Allow: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("10.20.0.0/16"),
	}}
	cases := []struct {
		addr    string
		allowed bool
	}{
		{"127.0.0.1", true},
		{"127.3.2.1", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true}, // an IPv4 prefix allows the mapped form
		{"10.20.5.5", true},
		{"10.21.0.1", false},
		{"169.254.169.254", false},
		{"8.8.8.8", true},
	}
	for _, c := range cases {
		t.Run(c.addr, func(t *testing.T) {
			t.Parallel()
			err := p.Check(netip.MustParseAddr(c.addr))
			if got := err == nil; got != c.allowed {
				t.Errorf("Check(%s) = %v, want allowed=%v", c.addr, err, c.allowed)
			}
		})
	}
}

func TestCheckRefusesTheZeroAddress(t *testing.T) {
	t.Parallel()
	if err := (Policy{}).Check(netip.Addr{}); !errors.Is(err, ErrRefusedAddress) {
		t.Errorf("Check(invalid) = %v, want ErrRefusedAddress", err)
	}
}
