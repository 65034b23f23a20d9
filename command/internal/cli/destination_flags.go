package cli

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// DeliveryFlags configure deliveries to tenants' endpoints: the deliverer
// in processes that consume, and the rules endpoints are created under.
type DeliveryFlags struct {
	Deliver        bool `name:"deliver" env:"SLUICE_DELIVER" default:"true" negatable:"" help:"Run the deliverer of tenants' endpoints in a process that consumes (needs SLUICE_SECRET_KEY); --no-deliver runs the consumers without it (deliveries then wait, pending, for a process that delivers)."`
	EndpointPolicy `embed:""`
	Horizon        time.Duration `name:"delivery-horizon" env:"SLUICE_DELIVERY_HORIZON" default:"72h" help:"How long a delivery is retried before it is dead for its endpoint (at most the payload horizon)."`
	FailingHorizon time.Duration `name:"delivery-failing-horizon" env:"SLUICE_DELIVERY_FAILING_HORIZON" default:"120h" help:"An endpoint whose every attempt failed for this long is disabled."`
	FailingNotice  time.Duration `name:"delivery-failing-notice" env:"SLUICE_DELIVERY_FAILING_NOTICE" default:"1h" help:"An endpoint whose every attempt failed for this long is told to its tenant's other endpoints (sluice.endpoint.failing), once per failure streak."`
	Timeout        time.Duration `name:"delivery-timeout" env:"SLUICE_DELIVERY_TIMEOUT" default:"15s" help:"Bound of one request to an endpoint, its answer included."`
	Backoff        time.Duration `name:"delivery-backoff" env:"SLUICE_DELIVERY_BACKOFF" default:"5s" help:"Wait after a delivery's first failed attempt; each next is four times longer, up to --delivery-backoff-max, jittered."`
	BackoffMax     time.Duration `name:"delivery-backoff-max" env:"SLUICE_DELIVERY_BACKOFF_MAX" default:"6h" help:"Longest wait between two attempts of a delivery, and of an endpoint's breaker (at most 10m) before it tries again."`
}

// EndpointPolicy is the deployment's rules for tenants' endpoints: the
// URLs they may have, the addresses the deliverer may dial, and the caps.
// The processes (their admin API and deliverer) and the CLI's endpoint
// commands read it from the same flags and variables, with the same
// defaults, so an endpoint the CLI accepts is one the deployment delivers
// to; the deliverer checks every address again when it dials.
type EndpointPolicy struct {
	AllowHTTP          bool     `name:"delivery-allow-http" env:"SLUICE_DELIVERY_ALLOW_HTTP" help:"Accept endpoints with plain http:// URLs (tests, private deployments); HTTPS only by default."`
	AllowNetworks      []string `name:"delivery-allow-networks" env:"SLUICE_DELIVERY_ALLOW_NETWORKS" sep:"," placeholder:"CIDR" help:"CIDRs endpoints may be dialled at although not public (loopback, private, link-local...); none by default."`
	DefaultConcurrency int      `name:"delivery-concurrency" env:"SLUICE_DELIVERY_CONCURRENCY" default:"4" help:"Requests in flight per endpoint and deliverer process, for endpoints that set none."`
	MaxConcurrency     int      `name:"delivery-max-concurrency" env:"SLUICE_DELIVERY_MAX_CONCURRENCY" default:"20" help:"Most requests in flight per endpoint and deliverer process, whatever the endpoint asks."`
	MaxRate            int      `name:"delivery-max-rate" env:"SLUICE_DELIVERY_MAX_RATE" default:"100" help:"Most requests per second per endpoint and deliverer process, whatever the endpoint asks."`
	EndpointsPerTenant int      `name:"endpoints-per-tenant" env:"SLUICE_ENDPOINTS_PER_TENANT" default:"50" help:"Most endpoints a tenant may have."`
}

// policyGroup is the help's heading of EndpointPolicy in the commands
// that take it beside their own flags.
const policyGroup = "endpoint-policy"

// policy is the addresses the deliverer may dial.
func (f EndpointPolicy) policy() (egress.Policy, error) {
	var p egress.Policy
	for _, cidr := range f.AllowNetworks {
		if cidr = strings.TrimSpace(cidr); cidr == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(cidr)
		if err != nil {
			return p, fmt.Errorf("--delivery-allow-networks: %w", err)
		}
		p.Allow = append(p.Allow, prefix.Masked())
	}
	return p, nil
}

// endpoints are the rules endpoints are created and changed under, and
// the check of their URLs (literal addresses the policy refuses, naming
// the setting that would allow them).
func (f EndpointPolicy) endpoints() (endpoints.Limits, func(string) error, error) {
	policy, err := f.policy()
	if err != nil {
		return endpoints.Limits{}, nil, err
	}
	limits := endpoints.Limits{AllowHTTP: f.AllowHTTP, MaxRate: f.MaxRate, MaxConcurrency: f.MaxConcurrency,
		MaxPerTenant: f.EndpointsPerTenant, DefaultConcurrency: f.DefaultConcurrency}
	check := func(raw string) error {
		_, err := policy.CheckURL(raw, f.AllowHTTP)
		if errors.Is(err, egress.ErrRefusedAddress) {
			return fmt.Errorf("%w; this deployment dials such an address only in a network of --delivery-allow-networks (SLUICE_DELIVERY_ALLOW_NETWORKS)", err)
		}
		return err
	}
	return limits, check, nil
}

// config is the deliverer's configuration.
func (f DeliveryFlags) config() (delivery.Config, error) {
	policy, err := f.policy()
	if err != nil {
		return delivery.Config{}, err
	}
	return delivery.Config{
		Client:             egress.NewClient(egress.Config{Policy: policy, Timeout: f.Timeout}),
		Dial:               egress.NewDialer(egress.Config{Policy: policy}).DialContext,
		Horizon:            f.Horizon,
		FailingHorizon:     f.FailingHorizon,
		FailingNotice:      f.FailingNotice,
		Timeout:            f.Timeout,
		BackoffBase:        f.Backoff,
		BackoffMax:         f.BackoffMax,
		DefaultConcurrency: f.DefaultConcurrency,
		MaxConcurrency:     f.MaxConcurrency,
		MaxRate:            f.MaxRate,
	}, nil
}
