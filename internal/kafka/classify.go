package kafka

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Fault says what a Kafka error means for whoever meets it, and so what
// they do about it. It is decided here, once, from franz-go's error codes
// (kerr: each code's meaning and its Retriable flag) and this package's own
// verdicts (Explain's on TLS and SASL, Access.Check's on ACLs), as
// pg.Classify decides Postgres faults: the relay, the consumers' rewinds,
// the topic gate, readiness and doctor must not disagree about one error.
type Fault int

const (
	// FaultNone: err is nil.
	FaultNone Fault = iota
	// FaultTransient: the cluster's moment (a leader moving, a broker
	// away, too few in-sync replicas, a timeout, the network) or anything
	// not Kafka's: the same request may pass soon. Retry with backoff.
	FaultTransient
	// FaultTopicMissing: the topic does not exist, or not yet on the
	// broker asked. Kafka calls it retriable, but it may never come: wait
	// for it a while, or create it.
	FaultTopicMissing
	// FaultGroupMissing: no such consumer group; Kafka 4 says so of a group
	// that never ran, which has no member to disturb.
	FaultGroupMissing
	// FaultExists: a create of what exists already: nothing to do.
	FaultExists
	// FaultTopicDenied: an ACL denies this client's user the topic; other
	// topics may flow. Nothing changes until a grant does.
	FaultTopicDenied
	// FaultGroupDenied: an ACL denies this client's user the consumer
	// group.
	FaultGroupDenied
	// FaultDenied: an ACL denies this client's user something the whole
	// client needs (the cluster, a transactional id, a delegation token).
	FaultDenied
	// FaultAuthentication: the broker does not let this client in (SASL
	// authentication failed or a mechanism it does not offer, a TLS
	// handshake refused either way, as Explain judged it). Nothing passes
	// until a password, a certificate or a setting changes.
	FaultAuthentication
	// FaultTooLarge: the record or its batch is over a size limit of the
	// broker or the topic; the same bytes fail again.
	FaultTooLarge
	// FaultRecordRefused: the broker refuses the record itself for good
	// (invalid, corrupt, a topic name it cannot have, acks it does not
	// take); the same bytes fail again.
	FaultRecordRefused
	// FaultRefused: any other answer the broker will give again (Kafka's
	// codes that are not retriable); an operator must look.
	FaultRefused
)

var faultNames = [...]string{"none", "transient", "topic_missing", "group_missing", "exists", "topic_denied", "group_denied",
	"denied", "authentication", "too_large", "record_refused", "refused"}

func (f Fault) String() string {
	if int(f) < len(faultNames) {
		return faultNames[f]
	}
	return "unknown"
}

// Denies reports whether f is the broker refusing this client until
// someone changes a grant, a password or a certificate (an ACL, SASL,
// TLS): a verdict on the deployment, not on the moment or the data.
func (f Fault) Denies() bool {
	switch f {
	case FaultTopicDenied, FaultGroupDenied, FaultDenied, FaultAuthentication:
		return true
	}
	return false
}

// Classify decides the fault of err. A connection's TLS or SASL failure is
// judged by Explain, which knows the configuration (whether this client
// speaks TLS, which certificate it presents); Classify reads its verdict.
// Errors that carry no Kafka code and no verdict (the network, a timeout,
// a closed client, anything unknown) are transient: a retry costs a
// moment, a wrong verdict stops a stage or parks a record for good.
func Classify(err error) Fault {
	if err == nil {
		return FaultNone
	}
	if ex := (*explained)(nil); errors.As(err, &ex) {
		return ex.fault
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return FaultTransient
	}
	return faultOf(ke)
}

// faultOf judges one of Kafka's codes.
func faultOf(ke *kerr.Error) Fault {
	switch ke {
	case kerr.UnknownTopicOrPartition, kerr.UnknownTopicID:
		return FaultTopicMissing
	case kerr.GroupIDNotFound:
		return FaultGroupMissing
	case kerr.TopicAlreadyExists:
		return FaultExists
	case kerr.TopicAuthorizationFailed:
		return FaultTopicDenied
	case kerr.GroupAuthorizationFailed:
		return FaultGroupDenied
	case kerr.ClusterAuthorizationFailed, kerr.TransactionalIDAuthorizationFailed, kerr.DelegationTokenAuthorizationFailed:
		return FaultDenied
	case kerr.SaslAuthenticationFailed, kerr.UnsupportedSaslMechanism, kerr.IllegalSaslState:
		return FaultAuthentication
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return FaultTooLarge
	case kerr.InvalidRecord, kerr.CorruptMessage, kerr.InvalidTopicException, kerr.InvalidRequiredAcks:
		// CORRUPT_MESSAGE is retriable in Kafka's words (a bit flipped on
		// the way); the relay's bytes come from Postgres and fail alike.
		return FaultRecordRefused
	}
	if ke.Retriable {
		return FaultTransient
	}
	return FaultRefused
}
