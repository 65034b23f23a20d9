package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/pipeline"
)

// DocsCmd writes the parts of the manual (docs/) and of the repository that
// are generated from the binary itself, so they cannot drift from it, a
// hidden command: `sluice docs config` (TestConfigurationPageMatchesTheFlags
// checks docs/configuration.md against it) and `sluice docs openapi` (the
// admin API's clients are generated from it: make clients).
type DocsCmd struct {
	Config  DocsConfigCmd  `cmd:"" help:"Write the flag reference of docs/configuration.md (global flags and serve's) as Markdown."`
	OpenAPI DocsOpenAPICmd `cmd:"" name:"openapi" help:"Write the admin API's OpenAPI document, as serve's admin listener serves it, without connecting to anything."`
}

// DocsOpenAPICmd writes the document of /admin/v1/openapi.json (3.1) or of
// /admin/v1/openapi-3.0.json (3.0, for tools that read no other: the
// admin package's own rendering, as served) for the
// vocabularies the global flags configure (providers, event types,
// resource types) and the endpoint policy its flags say (an http URL is
// in the document only where the deployment accepts it). make clients
// generates from the defaults.
type DocsOpenAPICmd struct {
	Version        string                             `name:"openapi-version" enum:"3.1,3.0" default:"3.1" help:"Which rendering: 3.1 (the document) or 3.0 (its downgrade for older tools)."`
	EndpointPolicy `embed:"" group:"endpoint-policy"` // policyGroup
}

func (c *DocsOpenAPICmd) Run(k *kong.Context, g *Globals, log *slog.Logger) error {
	cfg := pipeline.Config{Topics: g.topics(), Catalog: g.catalog(), EventTypes: g.eventTypes()}
	var err error
	if cfg.Effects, err = g.effects(); err != nil {
		return err
	}
	if cfg.EndpointLimits, cfg.EndpointURLCheck, err = c.endpoints(); err != nil {
		return err
	}
	doc, err := pipeline.AdminDocument(cfg, log)
	if err != nil {
		return err
	}
	var out []byte
	if c.Version == "3.0" {
		out, err = admin.Downgrade(doc)
	} else {
		out, err = json.Marshal(doc)
	}
	if err != nil {
		return fmt.Errorf("docs openapi: %w", err)
	}
	// Indented, so a change to the API reads as a diff of the document.
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return fmt.Errorf("docs openapi: %w", err)
	}
	pretty.WriteByte('\n')
	_, err = k.Stdout.Write(pretty.Bytes())
	return err
}

// DocsConfigCmd writes the flag reference.
type DocsConfigCmd struct{}

func (c *DocsConfigCmd) Run(k *kong.Context) error {
	return writeFlagReference(k.Stdout, k.Model.Node)
}

// flagSection is one table of the configuration page.
type flagSection struct {
	title string
	flags []string
}

// flagSections sorts the flags into the sections of the configuration page,
// in this order. A flag no section names is listed under "Other flags", so a
// new flag shows in the page (and fails its test) until it is given a home.
var flagSections = []flagSection{
	{"Connections and secrets", []string{"database-url", "owner-database-url", "admin-database-url", "kafka-brokers", "kafka-tls", "kafka-ca-file",
		"kafka-sasl-mechanism", "kafka-sasl-user", "kafka-sasl-password", "secret-key"}},
	{"Listeners", []string{"http-addr", "tls-cert", "tls-key", "admin-addr", "admin-tls-cert", "admin-tls-key",
		"pprof", "shutdown-grace"}},
	{"Portal", []string{"portal-addr", "portal-url", "portal-tls-cert", "portal-tls-key", "portal-frame-ancestors", "portal-link-ttl",
		"portal-name", "portal-logo-url", "portal-accent"}},
	{"Ingest", []string{"max-body-bytes", "tenant-rate", "tenant-burst", "trusted-proxies", "ingest-committers",
		"ingest-batch", "max-json-depth", "max-json-tokens", "unverified-mib", "unverified-source-mib",
		"metrics-per-tenant"}},
	{"Event types", []string{"tenant-resource-types", "max-event-types"}},
	{"Topics and the relay", []string{"topic-prefix", "topic-partitions", "topic-replication", "topic-retention",
		"slot", "relay-linger", "relay-missing-topic-grace", "relay-create-topics", "outbox-retention"}},
	{"Consumers and the dispatcher", []string{"consumer-max-attempts", "consumer-buffer-mib", "consumer-transactions",
		"consumer-group-transactions", "consumer-share-patience", "dispatch-url", "dispatch-secret"}},
	{"Destinations", []string{"deliver", "delivery-allow-http", "delivery-allow-networks", "delivery-horizon",
		"delivery-failing-horizon", "delivery-timeout", "delivery-backoff", "delivery-backoff-max",
		"delivery-concurrency",
		"delivery-max-concurrency", "delivery-max-rate", "endpoints-per-tenant"}},
	{"Storage horizons", []string{"payload-horizon", "key-horizon", "links-horizon", "partition-interval",
		"lifecycle-cleanup", "lifecycle-every"}},
	{"Reconciliation", []string{"reconcile", "reconcile-every", "reconcile-jitter", "reconcile-budget",
		"reconcile-run-timeout", "reconcile-lookback"}},
	{"Process", []string{"migrate", "memory-limit-mib", "gc-percent", "log-level", "log-format"}},
}

// writeFlagReference writes every flag of the global options and of `serve`
// (which ingest, cdc and consume share) as Markdown tables, one per section:
// flag, environment variable, default and help, as kong reads them.
func writeFlagReference(w io.Writer, root *kong.Node) error {
	flags, order, err := serveFlags(root)
	if err != nil {
		return err
	}
	for i, s := range sectionsOf(order) {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "### %s\n\n| flag | variable | default | meaning |\n|---|---|---|---|\n", s.title)
		for _, name := range s.flags {
			f, ok := flags[name]
			if !ok {
				return fmt.Errorf("docs config: section %q names --%s, which serve does not have", s.title, name)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", flagCell(f), envCell(f), defaultCell(f), helpCell(f))
		}
	}
	return nil
}

// serveFlags are the flags `sluice serve` takes (the globals and its own) by
// name, and their names in the order the CLI declares them.
func serveFlags(root *kong.Node) (map[string]*kong.Flag, []string, error) {
	var serve *kong.Node
	for _, n := range root.Children {
		if n.Name == "serve" {
			serve = n
		}
	}
	if serve == nil {
		return nil, nil, fmt.Errorf("docs config: no serve command")
	}
	byName := map[string]*kong.Flag{}
	var order []string
	for _, f := range append(append([]*kong.Flag{}, root.Flags...), serve.Flags...) {
		if f.Hidden || f.Name == "help" || f.Name == "help-all" {
			continue
		}
		if _, dup := byName[f.Name]; !dup {
			order = append(order, f.Name)
		}
		byName[f.Name] = f
	}
	return byName, order, nil
}

// sectionsOf is flagSections, then "Other flags" for those of names no
// section places.
func sectionsOf(names []string) []flagSection {
	placed := map[string]bool{}
	for _, s := range flagSections {
		for _, name := range s.flags {
			placed[name] = true
		}
	}
	var other []string
	for _, name := range names {
		if !placed[name] {
			other = append(other, name)
		}
	}
	sections := append([]flagSection(nil), flagSections...)
	if len(other) > 0 {
		sections = append(sections, flagSection{"Other flags", other})
	}
	return sections
}

func flagCell(f *kong.Flag) string {
	if f.Tag != nil && f.Tag.Negatable != "" {
		return "`--[no-]" + f.Name + "`"
	}
	return "`--" + f.Name + "`"
}

func envCell(f *kong.Flag) string {
	var envs []string
	for _, e := range f.Envs {
		envs = append(envs, "`"+e+"`")
		if readsEnvFile(f) {
			envs = append(envs, "`"+e+"_FILE`")
		}
	}
	return strings.Join(envs, ", ")
}

func defaultCell(f *kong.Flag) string {
	switch {
	case f.Default != "":
		return "`" + f.Default + "`"
	case f.IsBool():
		return "`false`"
	default:
		return ""
	}
}

func helpCell(f *kong.Flag) string {
	help := f.Help
	if f.Enum != "" {
		var values []string
		told := true // whether the help names every value already
		for _, v := range strings.Split(f.Enum, ",") {
			if v = strings.TrimSpace(v); v != "" {
				values = append(values, "`"+v+"`")
				told = told && strings.Contains(help, v)
			}
		}
		if !told {
			help += " One of " + strings.Join(values, ", ") + "."
		}
	}
	return strings.ReplaceAll(help, "|", `\|`)
}
