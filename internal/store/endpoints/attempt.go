package endpoints

import "time"

// Attempt is one request to an endpoint as its trail shows it.
type Attempt struct {
	Attempt   int       `json:"attempt" doc:"1 for the first request of a delivery."`
	At        time.Time `json:"at"`
	Status    int       `json:"status,omitempty" doc:"The endpoint's HTTP status; absent when no HTTP answer came (and for rabbitmq and kafka targets, which confirm or refuse)."`
	LatencyMS int       `json:"latency_ms"`
	// ErrorClass is "" for a 2xx; otherwise refused_address, dns, connect,
	// timeout, tls, reset, status (a non-2xx answer), ...
	ErrorClass string `json:"error_class,omitempty" doc:"Why it failed: status, timeout, connect, tls, dns, refused_address, ...; absent for a 2xx."`
	Error      string `json:"error,omitempty"`
	// Answer is the first 1 KiB of the answer's body.
	Answer string `json:"answer,omitempty" doc:"The first 1 KiB of the answer."`
	// RulesVersion is the version of the endpoint's rules whose
	// transformation the attempt sent with (0: unknown, an attempt of a
	// release before versions).
	RulesVersion int64 `json:"rules_version,omitempty" doc:"The version of the endpoint's rules whose transformation this request used; absent for requests made before versions."`
}

// ErrorClassTransformation is the error class of an attempt whose
// transformation failed over the event: nothing was sent, and the
// delivery is dead at once (the same rules would fail it again).
const ErrorClassTransformation = "transformation"

// OK says whether the target took the delivery: an HTTP endpoint answered
// 2xx, a RabbitMQ server confirmed the message, a Kafka cluster
// acknowledged the record (no status, no error class).
func (a Attempt) OK() bool {
	return a.ErrorClass == "" && (a.Status == 0 || a.Status >= 200 && a.Status < 300)
}
