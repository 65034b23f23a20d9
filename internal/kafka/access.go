package kafka

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The operations Sluice's stages use.
const (
	Read     = kadm.OpRead
	Write    = kadm.OpWrite
	Create   = kadm.OpCreate
	Describe = kadm.OpDescribe
)

// ACL is one permission on a topic or a group, named exactly or by prefix.
type ACL struct {
	Group    bool // a consumer group; otherwise a topic
	Name     string
	Prefixed bool
	Op       kadm.ACLOperation
}

// Required is every ACL Sluice's stages need with topic prefix prefix:
// topics and groups under "<prefix>.", nothing on the cluster. The relay's
// idempotent producer needs no IDEMPOTENT_WRITE on the cluster: since
// Kafka 2.8 WRITE on a topic implies it (KIP-679). READ and WRITE imply
// DESCRIBE; it is listed for a deployment granting less.
func Required(prefix string) []ACL {
	p := prefix + "."
	return []ACL{
		{Name: p, Prefixed: true, Op: Write},    // the relay (dead letters too: they go through the outbox)
		{Name: p, Prefixed: true, Op: Read},     // the consumers
		{Name: p, Prefixed: true, Op: Describe}, // everyone: metadata, offsets
		{Name: p, Prefixed: true, Op: Create},   // the topics at start, the relay's --relay-create-topics
		{Group: true, Name: p, Prefixed: true, Op: Read},
		{Group: true, Name: p, Prefixed: true, Op: Describe},
	}
}

// Builders turns ACLs allowing principal into kadm's builders, one per
// resource pattern.
func Builders(principal string, acls []ACL) []*kadm.ACLBuilder {
	type pattern struct {
		group    bool
		name     string
		prefixed bool
	}
	ops := map[pattern][]kadm.ACLOperation{}
	var order []pattern
	for _, a := range acls {
		p := pattern{a.Group, a.Name, a.Prefixed}
		if _, ok := ops[p]; !ok {
			order = append(order, p)
		}
		ops[p] = append(ops[p], a.Op)
	}
	var out []*kadm.ACLBuilder
	for _, p := range order {
		b := kadm.NewACLs().Allow(principal).AllowHosts().Operations(ops[p]...)
		if p.group {
			b = b.Groups(p.name)
		} else {
			b = b.Topics(p.name)
		}
		pt := kadm.ACLPatternLiteral
		if p.prefixed {
			pt = kadm.ACLPatternPrefixed
		}
		out = append(out, b.ResourcePatternType(pt))
	}
	return out
}

// Principal is how the broker names this configuration's client: the SASL
// user, else the client certificate's subject (Kafka's default for TLS
// clients, before any ssl.principal.mapping.rules), else ANONYMOUS.
func (c Config) Principal() (string, error) {
	switch {
	case c.SASLMechanism != "":
		return "User:" + c.SASLUser, nil
	case c.CertFile != "":
		raw, err := os.ReadFile(c.CertFile)
		if err != nil {
			return "", fmt.Errorf("kafka: client certificate: %w", err)
		}
		block, _ := pem.Decode(raw)
		if block == nil {
			return "", fmt.Errorf("kafka: no certificate in %s", c.CertFile)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return "", fmt.Errorf("kafka: client certificate: %w", err)
		}
		return "User:" + cert.Subject.String(), nil
	}
	return "User:ANONYMOUS", nil
}

// Need is what one stage does with Kafka: the operations it needs on
// topics and on groups.
type Need struct {
	Stage    string
	Topics   []string
	TopicOps []kadm.ACLOperation
	Groups   []string
	GroupOps []kadm.ACLOperation
}

// Access asks the broker what its principal may do. The broker reports a
// topic's authorized operations in Metadata and a group's in
// DescribeGroups (asked with Include...AuthorizedOperations), for a group
// that does not exist yet too; CREATE on a topic that does not exist is
// asked with a CreateTopics that only validates.
type Access struct {
	Client    *kgo.Client
	Principal string // Config.Principal
	Prefix    string // the topic prefix, for the suggested ACLs
	Bootstrap string // a broker, for the suggested command
}

// Check returns nil when the stage may do all it needs. Each operation
// missing is one line naming the user, the operation, the resource and the
// kafka-acls command that grants it, judged a denial (Classify's
// FaultTopicDenied or FaultGroupDenied); a broker that does not answer is
// an error judged no denial.
func (a Access) Check(ctx context.Context, n Need) error {
	var errs []error
	if len(n.Topics) > 0 && len(n.TopicOps) > 0 {
		missing, err := a.topicOps(ctx, n.Topics, n.TopicOps)
		if err != nil {
			return err
		}
		errs = append(errs, a.lines(n.Stage, false, missing)...)
	}
	if len(n.Groups) > 0 && len(n.GroupOps) > 0 {
		missing, err := a.groupOps(ctx, n.Groups, n.GroupOps)
		if err != nil {
			return err
		}
		errs = append(errs, a.lines(n.Stage, true, missing)...)
	}
	return errors.Join(errs...)
}

// denied is, per operation missing, the resources lacking it in order.
type denied struct {
	ops   []kadm.ACLOperation
	names map[kadm.ACLOperation][]string
}

func (d *denied) add(op kadm.ACLOperation, name string) {
	if d.names == nil {
		d.names = map[kadm.ACLOperation][]string{}
	}
	if _, ok := d.names[op]; !ok {
		d.ops = append(d.ops, op)
	}
	d.names[op] = append(d.names[op], name)
}

func (a Access) topicOps(ctx context.Context, topics []string, want []kadm.ACLOperation) (denied, error) {
	var d denied
	req := kmsg.NewPtrMetadataRequest()
	req.IncludeTopicAuthorizedOperations = true
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, a.Client)
	if err != nil {
		return d, err
	}
	var absent []string
	for _, t := range resp.Topics {
		var name string
		if t.Topic != nil {
			name = *t.Topic
		}
		switch err := kerr.ErrorForCode(t.ErrorCode); Classify(err) {
		case FaultTopicDenied:
			// Without DESCRIBE the broker tells nothing else of the topic,
			// whether it exists included.
			d.add(Describe, name)
		case FaultTopicMissing:
			absent = append(absent, name)
		case FaultNone:
			// A topic that exists needs no CREATE.
			have := append(kadm.DecodeACLOperations(t.AuthorizedOperations), Create)
			for _, op := range want {
				if !slices.Contains(have, op) {
					d.add(op, name)
				}
			}
		default:
			return d, fmt.Errorf("kafka: metadata of topic %s: %w", name, err)
		}
	}
	if len(absent) > 0 && slices.Contains(want, Create) {
		if err := a.canCreate(ctx, absent, &d); err != nil {
			return d, err
		}
	}
	return d, nil
}

// canCreate asks, without creating, whether the topics may be created.
func (a Access) canCreate(ctx context.Context, topics []string, d *denied) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly = true
	req.TimeoutMillis = 5000
	for _, t := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = t, -1, -1
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, a.Client)
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		if Classify(kerr.ErrorForCode(t.ErrorCode)) == FaultTopicDenied {
			d.add(Create, t.Topic)
		}
	}
	return nil
}

// groupOps asks for DESCRIBE and READ on groups. Kafka 4 answers
// DescribeGroups on a group that does not exist yet with GROUP_ID_NOT_FOUND
// and no authorized operations, and a group a stage has yet to join is the
// usual case at a first start: READ is asked with an offset commit that
// cannot commit anything, for a topic that does not exist. The broker
// checks READ on the group before it looks at any topic (a refusal is
// GROUP_AUTHORIZATION_FAILED), and with no topic left to commit to it
// never reaches the group's coordinator, so the group is neither created
// nor touched.
func (a Access) groupOps(ctx context.Context, groups []string, want []kadm.ACLOperation) (denied, error) {
	var d denied
	for _, g := range groups {
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Group, req.Generation = g, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = probeTopic
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, a.Client)
		switch {
		case Classify(err) == FaultGroupDenied:
			// Finding the group's coordinator needs DESCRIBE.
			d.add(Describe, g)
			continue
		case err != nil:
			return d, err
		}
		for _, t := range resp.Topics {
			for _, p := range t.Partitions {
				if Classify(kerr.ErrorForCode(p.ErrorCode)) == FaultGroupDenied && slices.Contains(want, Read) {
					d.add(Read, g)
				}
			}
		}
	}
	return d, nil
}

// probeTopic is a topic no one may create (the double underscore is
// Kafka's internal topics' prefix, and the name ends in a character
// topics cannot have).
const probeTopic = "__sluice_access_probe!"

// lines are the refusals of one kind of resource, one per operation.
func (a Access) lines(stage string, group bool, d denied) []error {
	kind, flag, cause, fault := "topic", "--topic", kerr.TopicAuthorizationFailed, FaultTopicDenied
	if group {
		kind, flag, cause, fault = "group", "--group", kerr.GroupAuthorizationFailed, FaultGroupDenied
	}
	var errs []error
	for _, op := range d.ops {
		names := d.names[op]
		what := kind + " " + names[0]
		if len(names) > 1 {
			what += fmt.Sprintf(" and %d more", len(names)-1)
		}
		pattern := fmt.Sprintf("%s %s --resource-pattern-type prefixed", flag, a.Prefix+".")
		if a.Prefix == "" || !strings.HasPrefix(names[0], a.Prefix+".") {
			pattern = flag + " " + names[0]
		}
		msg := fmt.Sprintf("kafka user %s lacks %s on %s (stage %s): kafka-acls --bootstrap-server %s --command-config admin.properties --add --allow-principal %s --operation %s %s",
			strings.TrimPrefix(a.Principal, "User:"), op, what, stage, a.Bootstrap, a.Principal, aclsOperation(op), pattern)
		errs = append(errs, &explained{msg: msg, cause: cause, fault: fault})
	}
	return errs
}

// aclsOperation is kafka-acls' spelling of an operation: DESCRIBE_CONFIGS
// is DescribeConfigs.
func aclsOperation(op kadm.ACLOperation) string {
	var b strings.Builder
	for _, word := range strings.Split(op.String(), "_") {
		b.WriteString(word[:1] + strings.ToLower(word[1:]))
	}
	return b.String()
}
