package egress_test

import (
	"fmt"
	"net/netip"

	"github.com/sluicehq/sluice/internal/egress"
)

// An endpoint is checked once when the tenant creates it, for a clear
// error; the client checks again, on the address it dials, at every
// delivery.
func ExamplePolicy_CheckURL() {
	var p egress.Policy
	for _, raw := range []string{
		"https://hooks.example.com/sluice",
		"https://169.254.169.254/latest/meta-data/",
		"https://0x7f.0.0.1/",
		"http://hooks.example.com/sluice",
	} {
		if _, err := p.CheckURL(raw, false); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println("ok:", raw)
	}
	// Output:
	// ok: https://hooks.example.com/sluice
	// the URL's host 169.254.169.254 is not allowed: address 169.254.169.254 is link-local: not a public address
	// the URL's host 0x7f.0.0.1 is not allowed: address 127.0.0.1 is loopback: not a public address
	// the URL must use https
}

// A private deployment delivering to its own network lists it in Allow.
func ExamplePolicy_Check() {
	p := egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("10.20.0.0/16")}}
	fmt.Println(p.Check(netip.MustParseAddr("10.20.1.5")))
	fmt.Println(p.Check(netip.MustParseAddr("10.30.1.5")))
	fmt.Println(p.Check(netip.MustParseAddr("64:ff9b::a9fe:a9fe")))
	// Output:
	// <nil>
	// address 10.30.1.5 is private: not a public address
	// address 64:ff9b::a9fe:a9fe embeds 169.254.169.254, which is link-local: not a public address
}
