package cli

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// An SQS target, a FIFO queue of an SQS-compatible server (ElasticMQ),
// through a kill -9 of the delivering process and a stop of the server
// mid-run, holds exactly the endpoint's events, each resource in a message
// group of its own with its first copies in Kafka's order, every copy
// deduplicated on its webhook-id and signed; the tenant's HTTP endpoint is
// not delayed while the server is down.
func TestSQSTargetGetsEverythingInOrderThroughKillAndOutage(t *testing.T) {
	t.Parallel()
	mq := testenv.StartElasticMQ(t)
	queue := mq.CreateQueue(t, "tenant-events.fifo")
	target := targetServer{
		endpoint: endpoints.New{Kind: endpoints.KindSQS, URL: queue, Settings: endpoints.TargetSettings{Region: "elasticmq"},
			Credentials: &endpoints.TargetCredentials{Username: "AKIDTENANT", Password: "tenant-secret"}},
		stop: func(tb testing.TB) {
			tb.Logf("queue before the stop: %s", mq.Count(tb, queue))
			mq.Stop(tb)
		},
		start: func(tb testing.TB) {
			mq.Start(tb)
			tb.Logf("queue after the start: %s", mq.Count(tb, queue))
		},
		messages: func(t *testing.T) []targetMessage {
			return sqsTargetMessages(t, mq, queue)
		},
	}
	deliverThroughKillAndOutage(t, target)
}

// sqsTargetMessages receives and deletes every message of a FIFO queue, in
// the order a receiver gets them (in order within a message group),
// checking that each message's group is its ce-partitionkey attribute. A
// message's id is its deduplication id.
func sqsTargetMessages(t *testing.T, mq *testenv.ElasticMQ, queue string) []targetMessage {
	t.Helper()
	var got []targetMessage
	for _, msg := range mq.Drain(t, queue) {
		m := targetMessage{id: msg.Attributes["MessageDeduplicationId"], headers: map[string]string{}, body: []byte(aws.ToString(msg.Body))}
		for k, v := range msg.MessageAttributes {
			m.headers[k] = aws.ToString(v.StringValue)
		}
		if group := msg.Attributes["MessageGroupId"]; group != m.headers[delivery.PartitionKeyHeader] || group == "" {
			t.Errorf("message group %q, %s %q: want the resource key in both", group, delivery.PartitionKeyHeader, m.headers[delivery.PartitionKeyHeader])
		}
		got = append(got, m)
	}
	return got
}
