package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/hmac"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// SourceCmd groups source administration.
type SourceCmd struct {
	Create              SourceCreateCmd              `cmd:"" help:"Create a source; prints its id, then its ingest URL."`
	List                SourceListCmd                `cmd:"" help:"List sources (never their secrets)."`
	Get                 SourceGetCmd                 `cmd:"" help:"Show a source (never its secrets)."`
	Kinds               SourceKindsCmd               `cmd:"" help:"List the source kinds this build knows."`
	RotateSecret        SourceRotateSecretCmd        `cmd:"" name:"rotate-secret" help:"Add a new secret; the old ones stay valid for --overlap."`
	Disable             SourceDisableCmd             `cmd:"" help:"Refuse every delivery of a source (e.g. a leaked secret)."`
	Enable              SourceEnableCmd              `cmd:"" help:"Accept a disabled source's deliveries again."`
	SetBodyLimit        SourceSetBodyLimitCmd        `cmd:"" name:"set-body-limit" help:"Set the largest body a source accepts (0: its kind's default)."`
	SetAPICredentials   SourceSetAPICredentialsCmd   `cmd:"" name:"set-api-credentials" help:"Store the provider API credentials reconciliation uses (sealed; never printed)."`
	ClearAPICredentials SourceClearAPICredentialsCmd `cmd:"" name:"clear-api-credentials" help:"Remove a source's provider API credentials."`
}

// SourceCreateCmd creates a source.
type SourceCreateCmd struct {
	Output
	Tenant       string        `required:"" help:"Tenant id." input:"uuid"`
	Kind         string        `required:"" help:"Provider kind: its signature scheme and how its events are read (sluice source kinds lists them)."`
	Account      string        `required:"" help:"Provider account the source speaks for (part of the event key)."`
	Secret       string        `required:"" env:"SLUICE_SOURCE_SECRET" envfile:"" help:"Signing secret as the provider shows it (e.g. whsec_...)." input:"secret"`
	BaseURL      string        `name:"base-url" env:"SLUICE_PUBLIC_URL" default:"http://localhost:8080" help:"Public base URL, to print the ingest URL." input:"max=2048"`
	Tolerance    time.Duration `help:"How far a signed timestamp may be from now, both ways (default 5m)."`
	MaxBodyBytes int64         `name:"max-body-bytes" help:"Largest body (default 1 MiB; GitHub sources 25 MiB; at most 25 MiB)."`
	AllowIP      []string      `name:"allow-ip" sep:"," help:"Only accept deliveries from these CIDRs, on top of the signature (X-Forwarded-For counts only from --trusted-proxies)."`

	HMACHeader      string `name:"hmac-header" group:"hmac" help:"hmac: header carrying the signature."`
	HMACAlgorithm   string `name:"hmac-algorithm" group:"hmac" enum:"sha256,sha512" default:"sha256" help:"hmac: sha256 or sha512."`
	HMACEncoding    string `name:"hmac-encoding" group:"hmac" enum:"hex,base64" default:"hex" help:"hmac: signature encoding, hex or base64."`
	HMACPrefix      string `name:"hmac-prefix" group:"hmac" help:"hmac: text before the signature, e.g. sha256=."`
	HMACTimestamp   string `name:"hmac-timestamp-header" group:"hmac" help:"hmac: header with a signed unix timestamp (the MAC then covers \"timestamp.body\")."`
	HMACEventID     string `name:"hmac-event-id" group:"hmac" help:"hmac: where the event id is: header:<Name> or a JSON pointer like /id."`
	HMACEventType   string `name:"hmac-event-type" group:"hmac" help:"hmac: where the event type is: header:<Name> or a JSON pointer like /type."`
	HMACObjectID    string `name:"hmac-object-id" group:"hmac" help:"hmac: JSON pointer to the object id, unless the catalogue names one."`
	HMACEventTime   string `name:"hmac-event-time" group:"hmac" help:"hmac: JSON pointer to the event time."`
	HMACEventFormat string `name:"hmac-event-time-format" group:"hmac" enum:"unix,rfc3339" default:"unix" help:"hmac: unix or rfc3339."`
}

// Validate refuses a kind the registry does not hold before anything
// connects: the choices are the registry's, not a list written here.
func (c *SourceCreateCmd) Validate() error {
	_, err := kinds.Builtin().Lookup(provider.Kind(c.Kind))
	return err
}

func (c *SourceCreateCmd) newSource() (tenancy.NewSource, error) {
	src := tenancy.NewSource{TenantID: c.Tenant, Kind: c.Kind, Account: c.Account, Secret: c.Secret,
		Tolerance: c.Tolerance, MaxBodyBytes: c.MaxBodyBytes}
	for _, cidr := range c.AllowIP {
		p, err := netip.ParsePrefix(strings.TrimSpace(cidr))
		if err != nil {
			return src, fmt.Errorf("--allow-ip %q: %w", cidr, err)
		}
		src.IPAllowlist = append(src.IPAllowlist, p.Masked())
	}
	// The secret and the settings are checked by the store, as for every
	// way a source enters.
	if provider.Kind(c.Kind) == hmac.Kind {
		settings := hmac.Settings{
			HMACConfig: signature.HMACConfig{Header: c.HMACHeader, Algorithm: c.HMACAlgorithm, Encoding: c.HMACEncoding,
				Prefix: c.HMACPrefix, TimestampHeader: c.HMACTimestamp},
			EventID: c.HMACEventID, EventType: c.HMACEventType, ObjectID: c.HMACObjectID,
			EventTime: c.HMACEventTime, EventTimeFormat: c.HMACEventFormat,
		}
		raw, err := json.Marshal(settings)
		if err != nil {
			return src, err
		}
		src.Settings = raw
	}
	return src, nil
}

func (c *SourceCreateCmd) Run(ctx context.Context, g *Globals) error {
	ns, err := c.newSource()
	if err != nil {
		return err
	}
	s, done, err := g.store(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	id, err := s.CreateSource(ctx, ns)
	if err != nil {
		return err
	}
	url := strings.TrimRight(c.BaseURL, "/") + "/v1/ingest/" + id
	return c.print(id, map[string]any{"tenant_id": c.Tenant, "kind": c.Kind, "account": c.Account, "ingest_url": url}, url)
}

// SourceRotateSecretCmd adds a secret with overlap.
type SourceRotateSecretCmd struct {
	Output
	Source   string        `required:"" help:"Source id." input:"uuid"`
	Secret   string        `xor:"secret" required:"" env:"SLUICE_SOURCE_SECRET" envfile:"" help:"The new signing secret, as the provider shows it." input:"secret"`
	Generate bool          `xor:"secret" required:"" help:"Make a new secret and print it once (senders whose secret the receiver chooses; not Stripe)."`
	Overlap  time.Duration `default:"24h" help:"How long the current secrets stay valid beside the new one (0: expire them now)."`
}

func (c *SourceRotateSecretCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	var (
		expires time.Time
		secret  string
	)
	if c.Generate {
		secret, expires, err = s.RotateGeneratedSecret(ctx, c.Source, c.Overlap)
	} else {
		expires, err = s.RotateSecret(ctx, c.Source, c.Secret, c.Overlap)
	}
	if err != nil {
		return err
	}
	note := fmt.Sprintf("new secret added; previous secrets stop working by %s (running ingest instances pick this up within 5s)", expires.UTC().Format(time.RFC3339))
	fields := map[string]any{"old_secrets_expire_at": expires.UTC()}
	details := []string{note}
	if secret != "" {
		fields["secret"] = secret
		details = append([]string{secret, "give it to the sender now: it is not shown again"}, details...)
	}
	return c.print(c.Source, fields, details...)
}

// SourceDisableCmd disables a source.
type SourceDisableCmd struct {
	Output
	Source string `required:"" help:"Source id." input:"uuid"`
}

func (c *SourceDisableCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.DisableSource(ctx, c.Source); err != nil {
		return err
	}
	return c.print(c.Source, map[string]any{"disabled": true},
		"disabled: every delivery is refused (404) by running ingest instances within 5s (their source cache)")
}

// SourceEnableCmd enables a disabled source.
type SourceEnableCmd struct {
	Output
	Source string `required:"" help:"Source id." input:"uuid"`
}

func (c *SourceEnableCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.EnableSource(ctx, c.Source); err != nil {
		return err
	}
	return c.print(c.Source, map[string]any{"disabled": false},
		"enabled: running ingest instances accept its deliveries within 5s (their source cache)")
}

// SourceSetBodyLimitCmd sets a source's body limit.
type SourceSetBodyLimitCmd struct {
	Output
	Source       string `required:"" help:"Source id." input:"uuid"`
	MaxBodyBytes int64  `name:"max-body-bytes" required:"" help:"Largest body, 1 to 26214400 (25 MiB); 0: the kind's default."`
}

func (c *SourceSetBodyLimitCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.SetBodyLimit(ctx, c.Source, c.MaxBodyBytes); err != nil {
		return err
	}
	return c.print(c.Source, map[string]any{"max_body_bytes": c.MaxBodyBytes}, "body limit set: running ingest instances apply it within 5s")
}

// SourceListCmd lists sources.
type SourceListCmd struct {
	Output
	Paging
	Tenant   string `help:"Only this tenant's sources." input:"uuid"`
	Kind     string `help:"Only sources of this kind."`
	Disabled bool   `xor:"state" help:"Only disabled sources."`
	Enabled  bool   `xor:"state" help:"Only enabled sources."`
}

func (c *SourceListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	f := tenancy.SourceFilter{TenantID: c.Tenant, Kind: c.Kind}
	if c.Disabled || c.Enabled {
		f.Disabled = &c.Disabled
	}
	items, next, err := s.Sources(ctx, f, c.page())
	if err != nil {
		return err
	}
	return printList(c.Output, items, next, "ID\tTENANT\tKIND\tACCOUNT\tSTATE\tSECRETS", func(src tenancy.Source) []any {
		return []any{src.ID, src.TenantID, src.Kind, src.Account, sourceState(src), src.ActiveSecrets}
	})
}

func sourceState(src tenancy.Source) string {
	if src.Disabled {
		return "disabled"
	}
	return "enabled"
}

// SourceGetCmd shows one source.
type SourceGetCmd struct {
	Output
	ID string `arg:"" name:"source-id" help:"Source id." input:"uuid"`
}

func (c *SourceGetCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	src, err := s.Source(ctx, c.ID)
	if err != nil {
		return err
	}
	body := "default"
	if src.MaxBodyBytes != nil {
		body = fmt.Sprint(*src.MaxBodyBytes)
	}
	return printOne(c.Output, src, src.ID, field{"tenant", src.TenantID}, field{"kind", src.Kind}, field{"account", src.Account},
		field{"state", sourceState(src)}, field{"max body bytes", body}, field{"active secrets", src.ActiveSecrets},
		field{"ip allowlist", orDash(strings.Join(src.IPAllowlist, ", "))})
}

// SourceKindsCmd lists the kinds of the registry, one a line.
type SourceKindsCmd struct {
	Output
}

func (c *SourceKindsCmd) Run() error {
	shipped := kinds.Builtin().Kinds()
	names := make([]string, len(shipped))
	for i, k := range shipped {
		names[i] = string(k)
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"items": names})
	}
	_, err := fmt.Println(strings.Join(names, "\n"))
	return err
}
