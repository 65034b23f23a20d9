package egress

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrRefusedAddress is wrapped by every error for an address a Policy
// refuses, at endpoint creation or at dial time.
var ErrRefusedAddress = errors.New("egress: address is not public")

// RefusedError names a refused address and why. It wraps ErrRefusedAddress.
type RefusedError struct {
	Addr netip.Addr
	// Embedded is the IPv4 address Addr carries (NAT64, 6to4,
	// IPv4-compatible) when that is what was refused; else invalid.
	Embedded netip.Addr
	// Reason is what the address is: "loopback", "private", ...
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Embedded.IsValid() {
		return fmt.Sprintf("address %s embeds %s, which is %s: not a public address", e.Addr, e.Embedded, e.Reason)
	}
	return fmt.Sprintf("address %s is %s: not a public address", e.Addr, e.Reason)
}

func (e *RefusedError) Unwrap() error { return ErrRefusedAddress }

// Policy says which addresses may be dialled: public ones, and those in
// Allow. The zero Policy allows public addresses only.
type Policy struct {
	// Allow lists networks dialled despite not being public (tests, private
	// deployments). An IPv4 prefix also allows the IPv4-mapped IPv6 form of
	// its addresses.
	Allow []netip.Prefix
}

// Check returns nil for a public address or one in Allow, and otherwise a
// *RefusedError (wrapping ErrRefusedAddress) saying why.
func (p Policy) Check(a netip.Addr) error {
	if !a.IsValid() {
		return &RefusedError{Addr: a, Reason: "invalid"}
	}
	a = a.WithZone("")
	if p.allows(a) {
		return nil
	}
	u := a.Unmap()
	if why, ok := nonPublic(u); ok {
		return &RefusedError{Addr: a, Reason: why}
	}
	if v4, ok := embeddedIPv4(u); ok {
		if why, ok := nonPublic(v4); ok {
			return &RefusedError{Addr: a, Embedded: v4, Reason: why}
		}
	}
	if why, ok := nonGlobalIPv6(u); ok {
		return &RefusedError{Addr: a, Reason: why}
	}
	return nil
}

func (p Policy) allows(a netip.Addr) bool {
	u := a.Unmap()
	for _, n := range p.Allow {
		if n.Contains(a) || n.Contains(u) {
			return true
		}
	}
	return false
}
