package egress

import "net/netip"

// What is not public. net/netip's predicates name most of it; the tables
// hold the rest: ranges no webhook endpoint lives in, which IANA's special
// purpose registries reserve for documentation, benchmarks, carrier NAT or
// the future. The tables are read only.

type predicate struct {
	is  func(netip.Addr) bool
	why string
}

var predicates = []predicate{
	{netip.Addr.IsUnspecified, "unspecified"},
	{netip.Addr.IsLoopback, "loopback"},
	{netip.Addr.IsPrivate, "private"},
	{netip.Addr.IsLinkLocalUnicast, "link-local"},
	{netip.Addr.IsMulticast, "multicast"},
}

type reserved struct {
	prefix netip.Prefix
	why    string
}

var reservedRanges = []reserved{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved for IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("192.88.99.0/24"), "reserved (6to4 relay anycast)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved for benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved for documentation"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},

	{netip.MustParsePrefix("64:ff9b:1::/48"), "reserved for local NAT64"},
	{netip.MustParsePrefix("100::/64"), "reserved (discard only)"},
	{netip.MustParsePrefix("2001::/32"), "a Teredo tunnel"},
	{netip.MustParsePrefix("2001:2::/48"), "reserved for benchmarking"},
	{netip.MustParsePrefix("2001:db8::/32"), "reserved for documentation"},
	{netip.MustParsePrefix("3fff::/20"), "reserved for documentation"},
	{netip.MustParsePrefix("5f00::/16"), "reserved (SRv6 SIDs)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// Networks whose IPv6 addresses carry an IPv4 address in known bytes: a
// connection to one reaches, through a translator or tunnel, the IPv4
// address inside, which must be public too.
var (
	nat64         = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour     = netip.MustParsePrefix("2002::/16")
	ipv4Compat    = netip.MustParsePrefix("::/96")
	globalUnicast = netip.MustParsePrefix("2000::/3")
)

// nonPublic says why a (unmapped) address is not public, if it is not.
func nonPublic(a netip.Addr) (string, bool) {
	for _, p := range predicates {
		if p.is(a) {
			return p.why, true
		}
	}
	for _, r := range reservedRanges {
		if r.prefix.Contains(a) {
			return r.why, true
		}
	}
	return "", false
}

// embeddedIPv4 returns the IPv4 address an IPv6 address carries in NAT64,
// 6to4 or IPv4-compatible form.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return netip.Addr{}, false
	case nat64.Contains(a), ipv4Compat.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// nonGlobalIPv6 refuses what is left of IPv6 outside 2000::/3, the only
// space IANA allocates global unicast from, except NAT64 of a public
// address, which is how an IPv6-only network reaches the IPv4 internet.
func nonGlobalIPv6(a netip.Addr) (string, bool) {
	if !a.Is6() || globalUnicast.Contains(a) || nat64.Contains(a) {
		return "", false
	}
	if ipv4Compat.Contains(a) {
		return "IPv4-compatible (deprecated)", true
	}
	return "outside global unicast space", true
}
