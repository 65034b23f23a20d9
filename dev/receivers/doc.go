// Package receivers holds the receiver examples docs/destinations.md quotes:
// a tenant's endpoint verifying Sluice's Standard Webhooks signature and
// processing each webhook-id once, in Go (go/, Svix's library), Python
// (python/, PyPI's standardwebhooks) and Node (node/, npm's
// standardwebhooks). Its test signs requests the way consumers/delivery
// does, runs each example against them (a tampered body, a stranger's key
// and a stale timestamp refused, a retry processed once), and checks that
// the page's quotes are the files.
package receivers
