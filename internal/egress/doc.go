// Package egress is the HTTP client Sluice delivers tenants' webhooks with.
// The tenant chooses the URL, so the client is an SSRF target: left alone,
// http.Client would happily post to 127.0.0.1, to a database on 10.0.0.5 or
// to the cloud metadata service on 169.254.169.254. The invariant this
// package keeps is that the client never opens a connection to an address
// its Policy refuses, whatever the URL says and whatever DNS answers.
//
// Stripe gets that property by sending webhooks through smokescreen, an
// egress proxy that refuses non-public addresses. We get it in process: the
// net.Dialer's Control hook sees the address actually being connected to,
// after resolution, just before connect(2), and refuses it there. Checking
// the URL's host, or resolving it ourselves first, is not enough: a name can
// resolve to a public address when checked and to 127.0.0.1 when dialled
// (DNS rebinding), and an IP literal has many spellings (2130706433,
// 0x7f.0.0.1, 127.1, [::ffff:127.0.0.1]). So CheckURL's static check at
// endpoint creation only gives the tenant an early, clear error; the dial
// check is the one that holds.
//
// The rest of the client closes the other ways around the check:
//   - Proxy is nil: with HTTP_PROXY set, the dial would go to the proxy,
//     which is allowed, and the proxy would reach the internal address.
//   - Redirects are never followed: a public endpoint could answer 302 to an
//     internal one. A 3xx is the endpoint's answer, and a failed delivery.
//   - TLS is always verified, so the address dialled is the one that
//     answers.
//
// ReadAnswer and Classify are the two other judgements a deliverer needs
// from an HTTP exchange: how much of an answer to read, and what kind of
// failure an error is, each made once, here.
package egress
