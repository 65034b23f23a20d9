package kafka_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/testenv"
)

// accessFixture is a prefix of a test's own with two topics made by the
// super user, and the stages' needs on them.
type accessFixture struct {
	s                        *testenv.SecureKafka
	prefix, a, b, group      string
	relay, consumers, topics kafka.Need
}

func newAccessFixture(t *testing.T) accessFixture {
	t.Helper()
	s := testenv.RequireSecureKafka(t)
	f := accessFixture{s: s, prefix: "acl" + testenv.RandomSuffix()}
	f.a, f.b, f.group = f.prefix+".a", f.prefix+".b", f.prefix+".g"
	ctx := context.Background()
	if err := kafka.EnsureTopics(ctx, s.Admin(), kafka.TopicSpec{Partitions: 1}, f.a, f.b); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), s.Admin(), f.prefix+".") })
	f.relay = kafka.Need{Stage: "relay", Topics: []string{f.a, f.b}, TopicOps: []kadm.ACLOperation{kafka.Write, kafka.Describe}}
	f.consumers = kafka.Need{Stage: "consumers", Topics: []string{f.a, f.b}, TopicOps: []kadm.ACLOperation{kafka.Read, kafka.Describe},
		Groups: []string{f.group}, GroupOps: []kadm.ACLOperation{kafka.Read}}
	f.topics = kafka.Need{Stage: "topics", Topics: []string{f.a, f.b, f.prefix + ".c"}, TopicOps: []kadm.ACLOperation{kafka.Describe, kafka.Create}}
	return f
}

// access is a user of the test's own, allowed acls, as Sluice asks.
func (f accessFixture) access(t *testing.T, acls []kafka.ACL) kafka.Access {
	t.Helper()
	user, password := f.s.NewUser(t, "acl")
	f.s.Grant(t, "User:"+user, acls...)
	return f.client(t, f.s.SASL(user, password))
}

func (f accessFixture) client(t *testing.T, c kafka.Config) kafka.Access {
	t.Helper()
	cl, err := kafka.NewClient(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	principal, err := c.Principal()
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Access{Client: cl, Principal: principal, Prefix: f.prefix, Bootstrap: c.Brokers[0]}
}

// without is Required less one ACL.
func without(prefix string, drop kafka.ACL) []kafka.ACL {
	return slices.DeleteFunc(kafka.Required(prefix), func(a kafka.ACL) bool { return a == drop })
}

// expect waits (ACLs reach the authorizer a moment after they are made)
// until need's check says want, "" for nothing missing.
func expect(t *testing.T, acc kafka.Access, need kafka.Need, want string) {
	t.Helper()
	var got error
	testenv.Eventually(t, 20*time.Second, "the check to say "+want, func() (bool, error) {
		got = acc.Check(context.Background(), need)
		if want == "" {
			return got == nil, got
		}
		if got != nil && got.Error() == want && kafka.Classify(got).Denies() {
			return true, nil
		}
		return false, got
	})
}

func TestAccessWithEveryACLAllowsEveryStage(t *testing.T) {
	f := newAccessFixture(t)
	acc := f.access(t, kafka.Required(f.prefix))
	for _, need := range []kafka.Need{f.relay, f.consumers, f.topics} {
		expect(t, acc, need, "")
	}
}

func TestAccessWithoutTopicWriteNamesItForTheRelay(t *testing.T) {
	f := newAccessFixture(t)
	acc := f.access(t, without(f.prefix, kafka.ACL{Name: f.prefix + ".", Prefixed: true, Op: kafka.Write}))
	user := acc.Principal[len("User:"):]
	expect(t, acc, f.relay, "kafka user "+user+" lacks WRITE on topic "+f.a+" and 1 more (stage relay): kafka-acls --bootstrap-server "+
		f.s.SASLSSL[0]+" --command-config admin.properties --add --allow-principal User:"+user+" --operation Write --topic "+f.prefix+". --resource-pattern-type prefixed")
	expect(t, acc, f.consumers, "")
}

func TestAccessWithoutGroupReadNamesItForTheConsumers(t *testing.T) {
	f := newAccessFixture(t)
	acc := f.access(t, without(f.prefix, kafka.ACL{Group: true, Name: f.prefix + ".", Prefixed: true, Op: kafka.Read}))
	user := acc.Principal[len("User:"):]
	expect(t, acc, f.consumers, "kafka user "+user+" lacks READ on group "+f.group+" (stage consumers): kafka-acls --bootstrap-server "+
		f.s.SASLSSL[0]+" --command-config admin.properties --add --allow-principal User:"+user+" --operation Read --group "+f.prefix+". --resource-pattern-type prefixed")
	expect(t, acc, f.relay, "")
}

// READ and WRITE imply DESCRIBE, so a topic lacks DESCRIBE when nothing
// allows it at all: ACLs granted topic by topic, one left out.
func TestAccessWithoutTopicDescribeNamesIt(t *testing.T) {
	f := newAccessFixture(t)
	var acls []kafka.ACL
	for _, a := range kafka.Required(f.prefix) {
		if !a.Group {
			a.Name, a.Prefixed = f.a, false
		}
		acls = append(acls, a)
	}
	acc := f.access(t, acls)
	user := acc.Principal[len("User:"):]
	expect(t, acc, f.consumers, "kafka user "+user+" lacks DESCRIBE on topic "+f.b+" (stage consumers): kafka-acls --bootstrap-server "+
		f.s.SASLSSL[0]+" --command-config admin.properties --add --allow-principal User:"+user+" --operation Describe --topic "+f.prefix+". --resource-pattern-type prefixed")
}

// CREATE is asked only of a topic that does not exist.
func TestAccessWithoutCreateNamesTheMissingTopic(t *testing.T) {
	f := newAccessFixture(t)
	acc := f.access(t, without(f.prefix, kafka.ACL{Name: f.prefix + ".", Prefixed: true, Op: kafka.Create}))
	user := acc.Principal[len("User:"):]
	expect(t, acc, f.topics, "kafka user "+user+" lacks CREATE on topic "+f.prefix+".c (stage topics): kafka-acls --bootstrap-server "+
		f.s.SASLSSL[0]+" --command-config admin.properties --add --allow-principal User:"+user+" --operation Create --topic "+f.prefix+". --resource-pattern-type prefixed")
	topics, err := f.s.Admin().ListTopics(context.Background(), f.prefix+".c")
	if err != nil || topics.Has(f.prefix+".c") {
		t.Errorf("the check created %s.c (%v)", f.prefix, err)
	}
}

// The ACLs of a client certificate are its subject's, and the check that
// probes READ on a group leaves no group behind.
func TestAccessOfAClientCertificateIsItsSubjects(t *testing.T) {
	f := newAccessFixture(t)
	cn := "acl-" + testenv.RandomSuffix()
	cert, key := f.s.IssueCert(t, cn, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	acc := f.client(t, f.s.MTLS(cert, key))
	if acc.Principal != "User:CN="+cn {
		t.Fatalf("principal %s, want User:CN=%s", acc.Principal, cn)
	}
	expect(t, acc, f.relay, "kafka user CN="+cn+" lacks DESCRIBE on topic "+f.a+" and 1 more (stage relay): kafka-acls --bootstrap-server "+
		f.s.SSL[0]+" --command-config admin.properties --add --allow-principal User:CN="+cn+" --operation Describe --topic "+f.prefix+". --resource-pattern-type prefixed")
	f.s.Grant(t, acc.Principal, kafka.Required(f.prefix)...)
	expect(t, acc, f.consumers, "")
	groups, err := f.s.Admin().ListGroups(context.Background())
	if err != nil || slices.Contains(groups.Groups(), f.group) {
		t.Errorf("the check left group %s (%v)", f.group, err)
	}
	// And the certificate's client produces where its ACLs allow.
	cl, err := kafka.NewClient(f.s.MTLS(cert, key))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: f.a, Value: []byte("x")}).FirstErr(); err != nil {
		t.Errorf("produce with the certificate: %v", err)
	}
}
