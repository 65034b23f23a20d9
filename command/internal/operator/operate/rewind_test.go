package operate_test

import (
	"context"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A rewind's dry run says what the execution then does: the executed
// moves equal the dry run's, the group's committed offsets are the dry
// run's new ones, and the records to re-read are the difference.
func TestRewindDryRunEqualsTheExecution(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(testenv.Require(t).Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	topic, group := b.topics.Resource("subscriptions"), b.topics.Resource("subscriptions")
	if _, err := adm.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = adm.DeleteTopics(context.Background(), topic) })
	for p := range int32(2) {
		for range 5 + p {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	committed := kadm.Offsets{}
	committed.AddOffset(topic, 0, 4, -1)
	committed.AddOffset(topic, 1, 2, -1)
	if _, err := adm.CommitOffsets(ctx, group, committed); err != nil {
		t.Fatal(err)
	}
	op := operate.New(b.pool, adm, operate.Config{Topics: b.topics, Groups: builtintest.Options(t, b.topics)})
	lags, err := op.ConsumerGroups(ctx, nil, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(lags) != 1 || lags[0].Lag != 1+4 || lags[0].Slowest == nil || lags[0].Slowest.Partition != 1 || len(lags[0].Partitions) != 2 {
		t.Errorf("lag = %+v, want 5 in all, partition 1 the slowest with 4", lags)
	}
	if _, err := op.ConsumerGroups(ctx, nil, "nosuch"); !errorsIsNotFound(err) {
		t.Errorf("lag of an unknown group: %v, want ErrNotFound", err)
	}
	if _, err := op.Rewind(ctx, nil, group, offsets.Target{Earliest: true, Latest: true}, false); err == nil {
		t.Error("a rewind to two targets ran")
	}
	target := offsets.Target{Offset: 1}

	dry, err := op.Rewind(ctx, nil, group, target, false)
	if err != nil {
		t.Fatal(err)
	}
	wantReread := []int64{3, 1}
	for i, m := range dry {
		if m.Reread != wantReread[i] || m.New != 1 {
			t.Errorf("dry run partition %d: %+v, want new 1 and %d to re-read", m.Partition, m, wantReread[i])
		}
	}
	before, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range committed.Sorted() {
		if o, _ := before.Lookup(topic, want.Partition); o.At != want.At {
			t.Fatalf("the dry run moved partition %d to %d", want.Partition, o.At)
		}
	}
	done, err := op.Rewind(ctx, nil, group, target, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dry, done) {
		t.Errorf("executed %+v, dry run said %+v", done, dry)
	}
	after, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range dry {
		if o, ok := after.Lookup(m.Topic, m.Partition); !ok || o.At != m.New {
			t.Errorf("partition %d committed at %d after the rewind, dry run said %d", m.Partition, o.At, m.New)
		}
	}
	if _, err := op.Rewind(ctx, nil, b.topics.Resource("nosuch"), target, false); !errorsIsNotFound(err) {
		t.Errorf("rewind of an unknown group: %v, want ErrNotFound", err)
	}
}
