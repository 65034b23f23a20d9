package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/keyring/sealed"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// Finding is one line of `sluice doctor`: a check and its error, nil when
// it passed.
type Finding struct {
	Check  listen.Check
	Err    error
	Refuse bool
}

// Doctor runs every check a process of cfg runs at start and in readiness,
// without starting anything or writing anything: what a deployment needs
// (wal_level, a free slot, the key ring opening the stored secrets,
// partitions ahead, Kafka and its topics) said in words a person can act
// on. An error means a check could not be built (the configuration itself
// is wrong); Postgres or Kafka away is a finding.
func Doctor(ctx context.Context, cfg Config, log *slog.Logger) ([]Finding, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &assembly{cfg: cfg.WithDefaults(), log: log, reg: prometheus.NewRegistry(), doctor: true}
	defer a.close()
	pool, err := pg.Connect(ctx, a.cfg.DatabaseURL, 4)
	if err != nil {
		return []Finding{{Check: listen.Check{Name: "postgres"}, Err: err, Refuse: true}}, nil
	}
	a.pool = pool
	a.closers = append(a.closers, pool.Close)
	if a.ownerPool, err = a.roleConnection(ctx, a.cfg.OwnerDatabaseURL, 2, "the owner's connection (SLUICE_OWNER_DATABASE_URL)"); err != nil {
		return []Finding{{Check: listen.Check{Name: "postgres_owner", Stage: "lifecycle"}, Err: err, Refuse: true}}, nil
	}
	if a.adminPool, err = a.roleConnection(ctx, a.cfg.AdminDatabaseURL, 2, "the admin listener's connection (SLUICE_ADMIN_DATABASE_URL)"); err != nil {
		return []Finding{{Check: listen.Check{Name: "postgres_admin", Stage: "admin"}, Err: err, Refuse: true}}, nil
	}
	if err := a.vocabulary(); err != nil {
		return nil, err
	}
	// Read-only: the list a first process would store is not stored here.
	if stored, err := catalog.StoredResourceTypes(ctx, pool); err == nil && len(stored) > 0 {
		a.types.ResourceTypes = stored
	}
	if err := a.kafkaTopics(ctx); err != nil {
		return nil, err
	}
	checks, err := a.deploymentChecks()
	if err != nil {
		return nil, err
	}
	errs := listen.Run(ctx, checks)
	out := make([]Finding, len(checks))
	for i, c := range checks {
		out[i] = Finding{Check: c, Err: errs[i], Refuse: c.Refuse && (errs[i] == nil || c.Refuses(errs[i]))}
	}
	return out, nil
}

// maxClockSkew is how far a process's clock may be from Postgres's:
// session and token expiry, reconciliation windows and the relay's
// heartbeat compare times taken on both sides.
const maxClockSkew = 5 * time.Second

// deploymentChecks are the checks of the stages cfg runs that the doctor
// shares with readiness: none of them writes.
func (a *assembly) deploymentChecks() ([]listen.Check, error) {
	pool := a.pool
	checks := []listen.Check{
		{Name: "postgres", Fn: pool.Ping, Ingest: true},
		{Name: "clock", Fn: func(ctx context.Context) error {
			skew, err := pg.ClockSkew(ctx, pool)
			if err != nil {
				return err
			}
			if skew.Abs() > maxClockSkew {
				return fmt.Errorf("this machine's clock is %s from postgres's (at most %s): run NTP on both", skew.Round(time.Millisecond), maxClockSkew)
			}
			return nil
		}},
	}
	checks = append(checks, listen.Check{Name: "resource_types", Refuse: true, Fn: a.checkResourceTypes})
	if a.cfg.Ingest {
		ring, err := keyring.Parse(a.cfg.SecretKey)
		if err != nil {
			return nil, err
		}
		// A ring that cannot open the stored secrets would answer 503 to
		// every delivery while looking healthy; GitHub never redelivers.
		keys := tenancy.Store{Pool: pool, Ring: ring}
		// The manager partitions, which only the owner may (roles.go).
		a.life = lifecycle.New(a.cfg.Lifecycle, a.ownerPool, a.log.With(slog.String("component", "lifecycle")), a.reg)
		// The manager keeps partitions ahead; if it stops or keeps failing,
		// operators hear of it an interval before the last one runs out,
		// and a load balancer once ingest's tables have none for now
		// (every delivery would fail).
		checks = append(checks,
			listen.Check{Name: "keyring", Stage: "ingest", Fn: keys.CheckKeyRing, Ingest: true, Refuse: true},
			listen.Check{Name: "partitions", Stage: "lifecycle", Fn: a.life.CheckAhead},
			listen.Check{Name: "partitions_now", Stage: "ingest", Fn: a.life.CheckWritable, Ingest: true})
	}
	if a.cfg.CDC {
		checks = append(checks, cdc.Checks(pool, a.cfg.CDCConfig)...)
	}
	if a.cfg.Consume && a.cfg.Deliver {
		ring, err := keyring.Parse(a.cfg.SecretKey)
		if err != nil {
			return nil, err
		}
		// An endpoint whose secret the ring cannot open gets no delivery
		// signed: its events would wait without a word. Not a refusal:
		// one endpoint's key must not stop every tenant's effects.
		cols := endpoints.Store{}.SealedColumns()
		checks = append(checks, listen.Check{Name: "keyring_endpoints", Stage: "delivery", Fn: func(ctx context.Context) error {
			return unopenable(ctx, pool, ring, cols)
		}})
	}
	checks = append(checks, a.postgresChecks()...)
	if a.adm != nil {
		adm := a.adm
		topics := listen.Check{Name: "topics", Fn: a.topics.check}
		if a.doctor {
			topics.Fn = func(ctx context.Context) error { return topicsPresent(ctx, adm, a.topicNames()) }
		}
		checks = append(checks, a.kafkaChecks()...)
		checks = append(checks, topics)
		// Advice before a start, not readiness: reading topic configs needs
		// DESCRIBE_CONFIGS, which no stage needs otherwise.
		if a.doctor {
			spec := a.cfg.TopicSpec.WithDefaults()
			checks = append(checks, listen.Check{Name: "topic_retention", Fn: func(ctx context.Context) error {
				return retentionReaches(ctx, adm, a.topicNames(), spec.Retention)
			}})
		}
	}
	return checks, nil
}

// topicNames are the topics the process's stages read or write: Sluice's
// own, then one shared topic per resource type of tenants' own event types,
// a bounded set whatever the tenants.
func (a *assembly) topicNames() []string {
	return append(groups.Topics(a.cfg.Topics, a.effects, a.catalogue.Topics()...), a.types.TenantTopics()...)
}

// topicsPresent names the topics Kafka does not have. Not a refusal: a
// process creates them at start when it may.
func topicsPresent(ctx context.Context, adm *kadm.Client, names []string) error {
	got, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("list topics: %w", err)
	}
	var missing []string
	for _, name := range names {
		if d, ok := got[name]; !ok || d.Err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	return fmt.Errorf("kafka lacks %d of the deployment's topics (%s): a process creates them at start when its user may create topics, or create them with the --topic-* settings", len(missing), strings.Join(missing, ", "))
}

// refuse runs the checks that waiting cannot fix and fails the start with
// every failing one's line: a process that cannot do its work must not
// look healthy.
func (a *assembly) refuse(ctx context.Context, checks []listen.Check) error {
	var lines []error
	for i, err := range listen.Run(ctx, checks) {
		if checks[i].Refuses(err) {
			lines = append(lines, fmt.Errorf("%s: %w", checks[i].Name, err))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("refusing to start (`sluice doctor` checks the same): %w", errors.Join(lines...))
}

// checkResourceTypes compares the process's resource types with the
// deployment's, as stored now: one added since the process started (its
// topic unread here) or a list of the process's own that differs.
func (a *assembly) checkResourceTypes(ctx context.Context) error {
	stored, err := catalog.StoredResourceTypes(ctx, a.pool)
	if err != nil || len(stored) == 0 {
		return err // none stored yet: the first process stores its list
	}
	own := a.types.ResourceTypes
	if a.doctor {
		own = a.cfg.Catalog.ResourceTypes
	}
	return catalog.SameResourceTypes(own, stored)
}

// unopenable names the key ids of cols the ring cannot open.
func unopenable(ctx context.Context, pool *pgxpool.Pool, ring *keyring.Ring, cols []sealed.Column) error {
	var lines []string
	for _, col := range cols {
		ids, err := sealed.Unopenable(ctx, pool, ring, col)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			lines = append(lines, fmt.Sprintf("%s sealed with key id(s) %s", col.Kind, strings.Join(ids, ", ")))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("the key ring cannot open %s: SLUICE_SECRET_KEY lacks those keys or holds other bytes under their ids (`sluice keys status` counts what each id seals)", strings.Join(lines, "; "))
}

// retentionReaches names the topics that keep records for less than want
// (--topic-retention): a rewind reaches back only as far as the topic
// keeps. Not a refusal: an operator may have chosen it; topics Kafka does
// not have are the topics check's.
func retentionReaches(ctx context.Context, adm *kadm.Client, names []string, want time.Duration) error {
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
	if errors.Is(err, kerr.TopicAuthorizationFailed) {
		return fmt.Errorf("retention not checked: the Kafka user may not describe the topics' configs (DESCRIBE_CONFIGS on the prefix; no stage needs it, only this check): %w", err)
	}
	if err != nil {
		return fmt.Errorf("describe topic configs: %w", err)
	}
	var short []string
	for _, rc := range configs {
		if rc.Err != nil {
			continue
		}
		for _, c := range rc.Configs {
			if c.Key != "retention.ms" || c.Value == nil {
				continue
			}
			ms, err := strconv.ParseInt(*c.Value, 10, 64)
			if err == nil && ms >= 0 && time.Duration(ms)*time.Millisecond < want {
				short = append(short, fmt.Sprintf("%s (%s)", rc.Name, time.Duration(ms)*time.Millisecond))
			}
		}
	}
	if len(short) == 0 {
		return nil
	}
	slices.Sort(short)
	return fmt.Errorf("%d topics keep records for less than --topic-retention %s, so a rewind reaches back only that far: %s; raise retention.ms (kafka-configs --alter --entity-type topics --add-config retention.ms=%d)",
		len(short), want, strings.Join(short, ", "), want.Milliseconds())
}
