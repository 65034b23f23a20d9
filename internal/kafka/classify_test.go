package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluicehq/sluice/internal/kafka"
)

// Each Kafka error is judged by what its meeter does about it: the codes
// the relay parks a record for, waits on a topic for, stops a stage for,
// and the ones it retries; an error with no Kafka code is transient.
func TestClassifyJudgesKafkasErrorsByBehaviour(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want kafka.Fault
	}{
		{nil, kafka.FaultNone},
		{kerr.NotLeaderForPartition, kafka.FaultTransient},
		{kerr.NotEnoughReplicas, kafka.FaultTransient},
		{kerr.RequestTimedOut, kafka.FaultTransient},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, kafka.FaultTransient},
		{context.DeadlineExceeded, kafka.FaultTransient},
		{kerr.UnknownTopicOrPartition, kafka.FaultTopicMissing}, // retriable in Kafka's words
		{kerr.UnknownTopicID, kafka.FaultTopicMissing},
		{kerr.GroupIDNotFound, kafka.FaultGroupMissing},
		{kerr.TopicAlreadyExists, kafka.FaultExists},
		{kerr.TopicAuthorizationFailed, kafka.FaultTopicDenied},
		{kerr.GroupAuthorizationFailed, kafka.FaultGroupDenied},
		{kerr.ClusterAuthorizationFailed, kafka.FaultDenied},
		{kerr.SaslAuthenticationFailed, kafka.FaultAuthentication},
		{kerr.MessageTooLarge, kafka.FaultTooLarge},
		{kerr.RecordListTooLarge, kafka.FaultTooLarge},
		{kerr.InvalidRecord, kafka.FaultRecordRefused},
		{kerr.CorruptMessage, kafka.FaultRecordRefused}, // retriable in Kafka's words
		{kerr.InvalidTopicException, kafka.FaultRecordRefused},
		{kerr.InvalidRequiredAcks, kafka.FaultRecordRefused},
		{kerr.PolicyViolation, kafka.FaultRefused},
		{kerr.UnknownServerError, kafka.FaultRefused},
		{fmt.Errorf("produce to sluice.invoices: %w", kerr.MessageTooLarge), kafka.FaultTooLarge},
		{errors.Join(errors.New("broker 1"), kerr.TopicAuthorizationFailed), kafka.FaultTopicDenied},
	} {
		if got := kafka.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
	for f, denies := range map[kafka.Fault]bool{kafka.FaultTopicDenied: true, kafka.FaultGroupDenied: true, kafka.FaultDenied: true,
		kafka.FaultAuthentication: true, kafka.FaultTransient: false, kafka.FaultTopicMissing: false, kafka.FaultRefused: false} {
		if f.Denies() != denies {
			t.Errorf("%s.Denies() = %v, want %v", f, f.Denies(), denies)
		}
	}
}

// What Explain words is judged as it words it: a SASL failure, in its
// words, is still an authentication fault, however it is wrapped.
func TestClassifyReadsExplainsVerdict(t *testing.T) {
	t.Parallel()
	c := kafka.Config{SASLMechanism: "scram-sha-512", SASLUser: "relay"}
	err := fmt.Errorf("start: %w", c.Explain(fmt.Errorf("sasl: %w", kerr.SaslAuthenticationFailed)))
	if got := kafka.Classify(err); got != kafka.FaultAuthentication {
		t.Errorf("Classify(%v) = %s, want authentication", err, got)
	}
	if !errors.Is(err, kerr.SaslAuthenticationFailed) {
		t.Errorf("%v lost its cause", err)
	}
}
