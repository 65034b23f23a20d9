package cli

import (
	"fmt"
	"os"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// targetFlags are a rabbitmq or kafka endpoint's settings and credentials
// (docs/destinations.md#targets-that-are-not-http). The password comes
// from the environment or a file, never the command line, which other
// users of the machine can read.
type targetFlags struct {
	Exchange      string `name:"exchange" group:"target" help:"rabbitmq: the exchange published to; empty: the default exchange." input:"max=255"`
	RoutingKey    string `name:"routing-key" group:"target" help:"rabbitmq: the routing key of every message (a queue's name on the default exchange)." input:"max=255"`
	Topic         string `name:"topic" group:"target" help:"kafka: the topic produced to." input:"max=255"`
	TLS           bool   `name:"tls" group:"target" help:"kafka: connect with TLS (amqps:// says it for rabbitmq)."`
	SASLMechanism string `name:"sasl-mechanism" group:"target" enum:",plain,scram-sha-256,scram-sha-512" default:"" help:"kafka: the SASL mechanism, with --target-user and its password."`
	Region        string `name:"region" group:"target" help:"sqs: the AWS region requests are signed for (eu-west-1)." input:"max=64"`
	CAFile        string `name:"ca-file" group:"target" type:"existingfile" help:"PEM certificates the target's TLS certificate is verified against (a private CA)."`
	User          string `name:"target-user" group:"target" help:"The user the target is authenticated as (sealed); sqs: the access key id." input:"max=255"`
	PasswordFile  string `name:"target-password-file" group:"target" type:"existingfile" help:"A file holding the target user's password (sealed), sqs: the secret access key; or SLUICE_TARGET_PASSWORD."`
}

// given says whether any target flag was given (an update changes the
// settings and credentials only then).
func (f targetFlags) given() bool {
	return f != targetFlags{}
}

// settings are the flags as the store takes them.
func (f targetFlags) settings() (endpoints.TargetSettings, *endpoints.TargetCredentials, error) {
	s := endpoints.TargetSettings{Exchange: f.Exchange, RoutingKey: f.RoutingKey, Topic: f.Topic, TLS: f.TLS, SASLMechanism: f.SASLMechanism, Region: f.Region}
	if f.CAFile != "" {
		ca, err := os.ReadFile(f.CAFile)
		if err != nil {
			return s, nil, fmt.Errorf("--ca-file: %w", err)
		}
		s.CA = string(ca)
	}
	if f.User == "" {
		return s, nil, nil
	}
	password := os.Getenv("SLUICE_TARGET_PASSWORD")
	if f.PasswordFile != "" {
		b, err := os.ReadFile(f.PasswordFile)
		if err != nil {
			return s, nil, fmt.Errorf("--target-password-file: %w", err)
		}
		password = string(trimNewline(b))
	}
	return s, &endpoints.TargetCredentials{Username: f.User, Password: password}, nil
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
