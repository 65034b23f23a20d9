package testenv

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// ElasticMQ is an SQS-compatible server of one test's own (ElasticMQ from
// Maven Central, run by dev/elasticmq/elasticmq.sh on a free port, its
// queues and messages kept in the test's temporary directory), so the test
// may stop it and start it again without touching any other's. It is
// removed when the test ends. It takes any signature: a test of
// credentials needs Amazon's SQS. Its store is not faithful across a stop
// under load (messages it acknowledged just before may be missing after
// it, a message deleted before it may come back in flight): a test that
// counts what a sender sent cuts the network to it instead (Proxy).
type ElasticMQ struct {
	// URL is http://127.0.0.1:port, the SQS API's endpoint; a queue's URL
	// is URL/000000000000/name.
	URL string

	dir, port, script string
}

// StartElasticMQ starts a server for tb or fails it.
func StartElasticMQ(tb testing.TB) *ElasticMQ {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	port, err := FreePorts(1)
	if err != nil {
		tb.Fatal(err)
	}
	q := &ElasticMQ{dir: filepath.Join(tb.TempDir(), "elasticmq"), port: port, script: filepath.Join(root, "dev/elasticmq/elasticmq.sh"),
		URL: "http://127.0.0.1:" + port}
	tb.Cleanup(func() { _, _ = q.run("down") })
	q.Start(tb)
	return q
}

// Start starts the server (again), with the queues and messages it had.
func (q *ElasticMQ) Start(tb testing.TB) {
	tb.Helper()
	if out, err := q.run("up", q.port); err != nil {
		tb.Fatalf("dev/elasticmq/elasticmq.sh up: %v\n%s", err, out)
	}
}

// Stop stops the server (its queues and messages stay for the next Start).
func (q *ElasticMQ) Stop(tb testing.TB) {
	tb.Helper()
	if out, err := q.run("stop"); err != nil {
		tb.Fatalf("dev/elasticmq/elasticmq.sh stop: %v\n%s", err, out)
	}
}

// QueueURL is the URL of queue name on this server.
func (q *ElasticMQ) QueueURL(name string) string { return q.URL + "/000000000000/" + name }

// Client is a client of the server for the test's own requests (creating
// queues, receiving what a target sent).
func (q *ElasticMQ) Client() *sqs.Client {
	return sqs.New(sqs.Options{Region: "elasticmq", BaseEndpoint: aws.String(q.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "receiver", SecretAccessKey: "receiver"}, nil
		})})
}

// CreateQueue creates queue name, FIFO (its name ends in .fifo) or
// standard, and returns its URL.
func (q *ElasticMQ) CreateQueue(tb testing.TB, name string) string {
	tb.Helper()
	attrs := map[string]string{}
	if filepath.Ext(name) == ".fifo" {
		attrs["FifoQueue"] = "true"
	}
	out, err := q.Client().CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		tb.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}

// Drain receives and deletes every message queue holds, in the order a
// receiver gets them (on a FIFO queue, in order within each message
// group), with their attributes and system attributes. It returns once
// the queue holds none, visible or in flight: a message received by a
// request whose answer was lost is in flight until its visibility timeout
// (5 s here), holding its group, and is received again then.
func (q *ElasticMQ) Drain(tb testing.TB, queue string) []types.Message {
	tb.Helper()
	ctx, cl := context.Background(), q.Client()
	var got []types.Message
	for deadline := time.Now().Add(2 * time.Minute); ; {
		out, err := cl.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queue), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, VisibilityTimeout: 5, MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range out.Messages {
			if _, err := cl.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(queue), ReceiptHandle: m.ReceiptHandle}); err != nil {
				tb.Fatal(err)
			}
		}
		got = append(got, out.Messages...)
		if len(out.Messages) > 0 {
			continue
		}
		if q.empty(tb, queue) {
			return got
		}
		if time.Now().After(deadline) {
			tb.Fatalf("queue %s: messages in flight for 2 minutes", queue)
		}
	}
}

// empty says whether queue holds no message, visible, in flight or delayed.
func (q *ElasticMQ) empty(tb testing.TB, queue string) bool {
	tb.Helper()
	out, err := q.Client().GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"} {
		if out.Attributes[a] != "0" {
			return false
		}
	}
	return true
}

func (q *ElasticMQ) run(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{q.script, args[0], q.dir}, args[1:]...)...)
	return cmd.CombinedOutput()
}
