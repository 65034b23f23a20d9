// Package kafka builds franz-go clients from Sluice's configuration and
// creates the topics Sluice owns. It holds no pipeline logic: the relay
// produces and the consumers consume with clients made here.
package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// Config says how to reach the cluster. Managed clusters need TLS and SASL;
// a local broker needs only Brokers.
type Config struct {
	Brokers   []string
	ClientID  string
	TLS       bool
	TLSCAFile string // PEM bundle; empty uses the system roots
	// CertFile and KeyFile are a client certificate for mutual TLS (PEM),
	// the alternative to SASL: the broker's principal is the certificate's
	// subject (User:CN=...). Either implies TLS.
	CertFile      string
	KeyFile       string
	SASLMechanism string // "", "plain", "scram-sha-256" or "scram-sha-512"
	SASLUser      string
	SASLPassword  string
	// Dial, when set, opens every broker connection, the ones to brokers
	// learned from metadata as well as the seeds': a sidecar proxy, or a
	// test's fault injector. TLS is then Dial's to do.
	Dial func(ctx context.Context, network, host string) (net.Conn, error)
}

// Options turns the configuration into client options.
func (c Config) Options() ([]kgo.Opt, error) {
	if len(c.Brokers) == 0 {
		return nil, errors.New("kafka: no brokers configured (set SLUICE_KAFKA_BROKERS)")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(c.Brokers...)}
	if c.Dial != nil {
		if c.usesTLS() {
			return nil, errors.New("kafka: a custom dialer does its own TLS")
		}
		opts = append(opts, kgo.Dialer(c.Dial))
	}
	if c.ClientID != "" {
		opts = append(opts, kgo.ClientID(c.ClientID))
	}
	if c.usesTLS() {
		cfg, err := c.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	switch strings.ToLower(c.SASLMechanism) {
	case "":
	case "plain":
		opts = append(opts, kgo.SASL(plain.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsMechanism()))
	case "scram-sha-256":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsSha256Mechanism()))
	case "scram-sha-512":
		opts = append(opts, kgo.SASL(scram.Auth{User: c.SASLUser, Pass: c.SASLPassword}.AsSha512Mechanism()))
	default:
		return nil, fmt.Errorf("kafka: unknown SASL mechanism %q", c.SASLMechanism)
	}
	return opts, nil
}

func (c Config) usesTLS() bool {
	return c.TLS || c.TLSCAFile != "" || c.CertFile != "" || c.KeyFile != ""
}

func (c Config) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if (c.CertFile == "") != (c.KeyFile == "") {
		return nil, errors.New("kafka: a client certificate needs both --kafka-cert-file and --kafka-key-file")
	}
	if c.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("kafka: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if c.TLSCAFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(c.TLSCAFile)
	if err != nil {
		return nil, fmt.Errorf("kafka: read CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("kafka: no certificate in %s", c.TLSCAFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}

// NewClient makes a client with the configuration plus extra options.
func NewClient(c Config, extra ...kgo.Opt) (*kgo.Client, error) {
	opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: new client: %w", err)
	}
	return cl, nil
}

// TopicSpec is how Sluice creates its topics.
type TopicSpec struct {
	Partitions  int32         // default 12
	Replication int16         // 1 locally, 3 in production
	Retention   time.Duration // how far back a rewind can go; default 7 days
}

// WithDefaults fills unset fields.
func (s TopicSpec) WithDefaults() TopicSpec {
	if s.Partitions <= 0 {
		s.Partitions = 12
	}
	if s.Replication <= 0 {
		s.Replication = 1
	}
	if s.Retention <= 0 {
		s.Retention = 7 * 24 * time.Hour
	}
	return s
}

// EnsureTopics creates the topics that do not exist yet. Existing topics are
// left as they are: changing partitions would move keys between partitions
// and break per-resource order, so that is an operator's decision.
func EnsureTopics(ctx context.Context, adm *kadm.Client, spec TopicSpec, topics ...string) error {
	spec = spec.WithDefaults()
	retention := strconv.FormatInt(spec.Retention.Milliseconds(), 10)
	resp, err := adm.CreateTopics(ctx, spec.Partitions, spec.Replication,
		map[string]*string{"retention.ms": &retention}, topics...)
	if err != nil {
		return fmt.Errorf("kafka: create topics: %w", err)
	}
	for _, r := range resp.Sorted() {
		if r.Err != nil && Classify(r.Err) != FaultExists {
			return fmt.Errorf("kafka: create topic %s: %w", r.Topic, r.Err)
		}
	}
	return waitLeaders(ctx, adm, topics)
}

// waitLeaders returns once every partition of the topics has a leader. A
// created topic reaches the brokers' metadata a moment after CreateTopics
// answers; a producer that writes in that moment gets
// UNKNOWN_TOPIC_OR_PARTITION and, on a loaded machine, runs out of retries.
func waitLeaders(ctx context.Context, adm *kadm.Client, topics []string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		missing, err := leaderless(ctx, adm, topics)
		if err == nil && missing == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = fmt.Errorf("topic %s has a partition without a leader", missing)
			}
			return fmt.Errorf("kafka: wait for new topics: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// leaderless names a topic with a partition that has no leader yet, or "".
func leaderless(ctx context.Context, adm *kadm.Client, topics []string) (string, error) {
	md, err := adm.Metadata(ctx, topics...)
	if err != nil {
		return "", err
	}
	for _, name := range topics {
		td, ok := md.Topics[name]
		if !ok || td.Err != nil || len(td.Partitions) == 0 {
			return name, nil
		}
		for _, p := range td.Partitions {
			if p.Err != nil || p.Leader < 0 {
				return name, nil
			}
		}
	}
	return "", nil
}

// DeleteTopicsWithPrefix deletes every topic whose name starts with prefix:
// how tests and the bench leave a shared broker as they found it (thousands
// of leftover partitions slow a development broker down).
func DeleteTopicsWithPrefix(ctx context.Context, adm *kadm.Client, prefix string) error {
	if prefix == "" {
		return errors.New("kafka: refusing to delete topics without a prefix")
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return fmt.Errorf("kafka: list topics: %w", err)
	}
	var names []string
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	resp, err := adm.DeleteTopics(ctx, names...)
	if err != nil {
		return fmt.Errorf("kafka: delete topics: %w", err)
	}
	return resp.Error()
}

// Reachable reports whether any broker answers. kadm's ApiVersions fails as
// a whole only when it cannot ask at all; a dead broker it knows of shows up
// as that broker's error. Readiness needs one broker that answers: with
// replication, the others' absence is the cluster's business.
func Reachable(ctx context.Context, adm *kadm.Client) error {
	versions, err := adm.ApiVersions(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range versions.Sorted() {
		if v.Err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("broker %d: %w", v.NodeID, v.Err))
	}
	if len(errs) == 0 {
		return errors.New("kafka: no broker known")
	}
	return errors.Join(errs...)
}
