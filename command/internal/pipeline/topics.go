package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/internal/kafka"
)

const (
	// maxKafkaBackoff caps the pause between two attempts to create the topics.
	maxKafkaBackoff = 30 * time.Second
	// attemptTimeout bounds one attempt, waiting for the new topics'
	// leaders included.
	attemptTimeout = time.Minute
)

// errTopicsPending is what readiness reports until the topics exist.
var errTopicsPending = errors.New("waiting for kafka to create the topics")

// topicGate creates Sluice's topics in the background, retrying with backoff
// while Kafka is unreachable, and opens once they exist; the stages that
// read Kafka wait on it. A broker that answers with a refusal no retry can
// change (an invalid replication factor, no authorisation) fails the stage,
// and with it the process.
type topicGate struct {
	adm     *kadm.Client
	spec    kafka.TopicSpec
	names   []string
	backoff time.Duration
	log     *slog.Logger
	ready   chan struct{}
	// access, when set, is checked before and after the topics are made:
	// a denial stops the process instead of a stage retrying it forever.
	access *kafkaAccess
}

func newTopicGate(adm *kadm.Client, spec kafka.TopicSpec, names []string, backoff time.Duration, log *slog.Logger) *topicGate {
	return &topicGate{adm: adm, spec: spec, names: names, backoff: backoff, log: log, ready: make(chan struct{})}
}

// ensure creates the topics, retrying until it succeeds or ctx ends.
func (g *topicGate) ensure(ctx context.Context) error {
	backoff := g.backoff
	for {
		err := g.attempt(ctx)
		if err == nil {
			close(g.ready)
			g.log.Info("kafka topics ready", slog.Int("topics", len(g.names)))
			return nil
		}
		if ctx.Err() != nil {
			return nil
		}
		if f := kafka.Classify(err); f != kafka.FaultTransient && f != kafka.FaultTopicMissing {
			logRefusal(g.log, err)
			return err
		}
		g.log.Warn("kafka unreachable; the stages that need it wait", slog.Any("error", err), slog.Duration("retry_in", backoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxKafkaBackoff)
	}
}

// attempt is one bounded try, so a cluster that hangs is tried again.
func (g *topicGate) attempt(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	if g.access == nil {
		return kafka.EnsureTopics(ctx, g.adm, g.spec, g.names...)
	}
	// Before: CREATE on what is missing. After: what the stages do with
	// topics that exist (WRITE on a topic is only asked of one that exists).
	if err := g.access.check(ctx); err != nil {
		return err
	}
	if err := kafka.EnsureTopics(ctx, g.adm, g.spec, g.names...); err != nil {
		return g.access.cfg.Explain(err)
	}
	return g.access.check(ctx)
}

// wait returns once the topics exist, or ctx's error.
func (g *topicGate) wait(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// check is the gate's readiness.
func (g *topicGate) check(context.Context) error {
	select {
	case <-g.ready:
		return nil
	default:
		return errTopicsPending
	}
}
