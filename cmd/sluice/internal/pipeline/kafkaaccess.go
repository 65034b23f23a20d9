package pipeline

import (
	"context"
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/listen"
)

// kafkaAccess is what this process's stages need Kafka's ACLs to allow:
// each stage adds its need while the process is built. The topic gate
// checks them all before and after creating the topics, and refuses to
// start on a denial; readiness checks each stage's.
type kafkaAccess struct {
	cfg    kafka.Config
	access kafka.Access
	needs  []kafka.Need
}

func newKafkaAccess(cfg kafka.Config, cl *kgo.Client, prefix string) (*kafkaAccess, error) {
	principal, err := cfg.Principal()
	if err != nil {
		return nil, err
	}
	return &kafkaAccess{cfg: cfg, access: kafka.Access{Client: cl, Principal: principal, Prefix: prefix, Bootstrap: cfg.Brokers[0]}}, nil
}

// add records a stage's need and returns its readiness check.
func (k *kafkaAccess) add(n kafka.Need) listen.Check {
	k.needs = append(k.needs, n)
	return listen.Check{Name: "kafka_acls_" + n.Stage, Fn: func(ctx context.Context) error {
		return k.cfg.Explain(k.access.Check(ctx, n))
	}}
}

// check asks for every stage's need; a denial wraps kafka.ErrRefused.
func (k *kafkaAccess) check(ctx context.Context) error {
	var errs []error
	for _, n := range k.needs {
		err := k.cfg.Explain(k.access.Check(ctx, n))
		if err != nil && !errors.Is(err, kafka.ErrRefused) {
			return err // the broker did not answer: no verdict
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// logRefusal says at ERROR what stops the process, line by line.
func logRefusal(log *slog.Logger, err error) {
	log.Error("kafka refuses what this process needs; stopping", slog.String("error", err.Error()))
}

// topicOps are the operations on topics of each stage.
var (
	relayTopicOps    = []kadm.ACLOperation{kafka.Write, kafka.Describe}
	consumerTopicOps = []kadm.ACLOperation{kafka.Read, kafka.Describe}
	consumerGroupOps = []kadm.ACLOperation{kafka.Read}
	creatorTopicOps  = []kadm.ACLOperation{kafka.Describe, kafka.Create}
)
