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
}

// OK says whether the target took the delivery: an HTTP endpoint answered
// 2xx, a RabbitMQ server confirmed the message, a Kafka cluster
// acknowledged the record (no status, no error class).
func (a Attempt) OK() bool {
	return a.ErrorClass == "" && (a.Status == 0 || a.Status >= 200 && a.Status < 300)
}
