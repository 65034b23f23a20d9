package endpoints

import "fmt"

// Limits are a deployment's caps on its tenants' endpoints, and the
// defaults of an endpoint that states no rate or concurrency of its own.
// The caps hold for every caller (an unscoped token, a scoped one, the
// CLI): an endpoint asking more is refused, not clamped. Zero fields take
// the defaults below.
type Limits struct {
	// AllowHTTP lets an endpoint's URL be plain http (tests, private
	// deployments); default false: https only.
	AllowHTTP bool
	// MaxRate caps an endpoint's rate, in requests per second; default
	// 100.
	MaxRate int
	// MaxConcurrency caps an endpoint's requests in flight; default 20.
	MaxConcurrency int
	// MaxPerTenant caps how many endpoints one tenant has; default 50.
	MaxPerTenant int
	// DefaultRate is the rate of an endpoint stating none; default 0: no
	// rate of its own, the endpoint is sent to as fast as MaxRate allows.
	DefaultRate int
	// DefaultConcurrency is the concurrency of an endpoint stating none;
	// default 4.
	DefaultConcurrency int
}

// The defaults of Limits.
const (
	DefaultMaxRate            = 100
	DefaultMaxConcurrency     = 20
	DefaultMaxPerTenant       = 50
	DefaultConcurrencyDefault = 4
)

// WithDefaults is l with every zero field given its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxRate <= 0 {
		l.MaxRate = DefaultMaxRate
	}
	if l.MaxConcurrency <= 0 {
		l.MaxConcurrency = DefaultMaxConcurrency
	}
	if l.MaxPerTenant <= 0 {
		l.MaxPerTenant = DefaultMaxPerTenant
	}
	if l.DefaultConcurrency <= 0 {
		l.DefaultConcurrency = min(DefaultConcurrencyDefault, l.MaxConcurrency)
	}
	return l
}

// Validate says whether the defaults fit under the caps, for a process to
// refuse at start.
func (l Limits) Validate() error {
	l = l.WithDefaults()
	switch {
	case l.DefaultRate < 0 || l.DefaultRate > l.MaxRate:
		return fmt.Errorf("endpoint default rate %d: want 0 (the cap) up to the cap %d", l.DefaultRate, l.MaxRate)
	case l.DefaultConcurrency > l.MaxConcurrency:
		return fmt.Errorf("endpoint default concurrency %d: want at most the cap %d", l.DefaultConcurrency, l.MaxConcurrency)
	}
	return nil
}

// checkRate refuses a rate or concurrency past the caps; nil and 0 mean
// the deployment's default.
func (l Limits) check(rate, concurrency *int) error {
	l = l.WithDefaults()
	if rate != nil && (*rate < 0 || *rate > l.MaxRate) {
		return invalid("rate_per_second", "must be between 1 and %d (this deployment's cap, --delivery-max-rate); 0 or absent: the default", l.MaxRate)
	}
	if concurrency != nil && (*concurrency < 0 || *concurrency > l.MaxConcurrency) {
		return invalid("concurrency", "must be between 1 and %d (this deployment's cap, --delivery-max-concurrency); 0 or absent: the default (%d)", l.MaxConcurrency, l.DefaultConcurrency)
	}
	return nil
}
