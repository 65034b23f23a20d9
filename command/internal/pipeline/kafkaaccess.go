package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers/destinations"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/listen"
)

// kafkaAccess is what this process's stages need Kafka's ACLs to allow
// (kafkaChecks lists them): the deployment's checks ask each stage's, and
// the topic gate asks them all before and after it makes the topics,
// stopping the process on a denial.
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

// kafkaChecks are the deployment's Kafka checks: the connection (a wrong
// CA, certificate or password refuses; a broker away only waits), then the
// ACLs of every stage this process runs, which the topic gate also asks
// before and after it makes the topics.
func (a *assembly) kafkaChecks() []listen.Check {
	k, adm := a.access, a.adm
	checks := []listen.Check{{Name: "kafka", Refuse: true, Fn: func(ctx context.Context) error {
		return k.verdict(kafka.Reachable(ctx, adm))
	}}}
	names := a.topicNames()
	k.needs = []kafka.Need{{Stage: "topics", Topics: names, TopicOps: creatorTopicOps}}
	if a.cfg.CDC {
		ops := relayTopicOps
		if a.cfg.CDCConfig.CreateMissingTopics {
			ops = append(slices.Clip(ops), kafka.Create)
		}
		k.needs = append(k.needs, kafka.Need{Stage: "relay", Topics: names, TopicOps: ops})
	}
	if a.cfg.Consume {
		k.needs = append(k.needs, a.consumerNeed())
	}
	for _, n := range k.needs {
		// Every process making Kafka clients creates the topics: no stage.
		stage := n.Stage
		if stage == "topics" {
			stage = ""
		}
		checks = append(checks, listen.Check{Name: "kafka_acls_" + n.Stage, Stage: stage, Refuse: true, Fn: func(ctx context.Context) error {
			return k.aclVerdict(k.access.Check(ctx, n))
		}})
	}
	return checks
}

// consumerNeed is what the consumer groups this process runs read.
func (a *assembly) consumerNeed() kafka.Need {
	specs := groups.List(a.cfg.Topics, groups.Options{Effects: a.effects, Dispatch: a.cfg.Dispatch, Destinations: destinations.New(nil, destinations.Telemetry{}),
		EventTopics: a.eventTopics()})
	n := kafka.Need{Stage: "consumers", TopicOps: consumerTopicOps, GroupOps: consumerGroupOps}
	for _, spec := range specs {
		n.Groups = append(n.Groups, spec.ID)
		for _, t := range spec.Topics {
			if !slices.Contains(n.Topics, t) {
				n.Topics = append(n.Topics, t)
			}
		}
	}
	return n
}

// eventTopics are the topics tenants' events are published to: tenants'
// shared ones, then the catalogue's.
func (a *assembly) eventTopics() []string {
	topics := a.types.TenantTopics()
	for _, suffix := range a.catalogue.Topics() {
		topics = append(topics, a.cfg.Topics.Resource(suffix))
	}
	return topics
}

// aclVerdict is an ACL check's: a denial, or no verdict when the
// connection itself fails (the kafka check's line says why).
func (k *kafkaAccess) aclVerdict(err error) error {
	switch kafka.Classify(err) {
	case kafka.FaultNone, kafka.FaultTopicDenied, kafka.FaultGroupDenied:
		return err
	}
	return listen.NoVerdict(fmt.Errorf("no answer on the ACLs while the kafka check fails: %w", k.cfg.Explain(err)))
}

// verdict is err in Explain's words; one that is not a refusal (Kafka
// away, a timeout) gives no verdict on the ACLs.
func (k *kafkaAccess) verdict(err error) error {
	err = k.cfg.Explain(err)
	if err != nil && !kafka.Classify(err).Denies() {
		return listen.NoVerdict(err)
	}
	return err
}

// check asks for every stage's need; a denial is one kafka.Classify
// judges so (Fault.Denies).
func (k *kafkaAccess) check(ctx context.Context) error {
	var errs []error
	for _, n := range k.needs {
		err := k.cfg.Explain(k.access.Check(ctx, n))
		if err != nil && !kafka.Classify(err).Denies() {
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
