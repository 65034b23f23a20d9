package testenv

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/sluicehq/sluice/internal/kafka"
)

// TenantKafka is a Kafka cluster other than the deployment's, of one
// test's own, as a tenant's cluster is to Sluice: dev/kafka/secure-stack.sh
// with a name and ports of its own (SASL_SSL with SCRAM, a throwaway CA),
// which the test may stop and start again. It is stopped when the test
// ends; its state stays under .run/ for the next run.
type TenantKafka struct {
	*SecureKafka
	// User and Password are a SCRAM-SHA-512 user of the test's own, the
	// tenant's credentials, allowed to write and describe every topic.
	// Start upserts it again: after a restart of this throwaway
	// broker, logins with the credentials it had kept failed in these
	// tests (SASL_AUTHENTICATION_FAILED), the cause not found.
	User, Password string

	root string
	env  []string
}

// StartTenantKafka starts the test's cluster or fails it. Its plaintext
// port is SLUICE_TEST_TENANT_KAFKA_PORT when set (SASL_SSL the next, SSL
// the one after, the controller SLUICE_TEST_TENANT_KAFKA_CONTROLLER_PORT
// or the port plus 10000), else a free one.
func StartTenantKafka(tb testing.TB) *TenantKafka {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	port := os.Getenv("SLUICE_TEST_TENANT_KAFKA_PORT")
	controller := os.Getenv("SLUICE_TEST_TENANT_KAFKA_CONTROLLER_PORT")
	if port == "" {
		if port, err = FreePorts(3); err != nil {
			tb.Fatal(err)
		}
		if controller, err = FreePorts(1); err != nil {
			tb.Fatal(err)
		}
	}
	if controller == "" {
		n, _ := strconv.Atoi(port)
		controller = strconv.Itoa(n + 10000)
	}
	k := &TenantKafka{root: root, env: []string{"SLUICE_SECURE_KAFKA_NAME=kafka-tenant-" + port,
		"SLUICE_SECURE_KAFKA_PORT=" + port, "SLUICE_SECURE_KAFKA_CONTROLLER_PORT=" + controller}}
	tb.Cleanup(func() {
		// Last: the user's cleanups (its ACLs) need the admin client.
		if k.SecureKafka != nil {
			k.admin.Close()
		}
		_, _ = secureStack(root, k.env, "down")
	})
	env, err := startSecureStack(k.env)
	if err != nil {
		tb.Fatal(err)
	}
	if k.SecureKafka, err = secureKafkaOf(env); err != nil {
		tb.Fatal(err)
	}
	k.User, k.Password = "tenant-"+RandomSuffix(), "pw-"+RandomSuffix()+RandomSuffix()
	k.Grant(tb, "User:"+k.User, kafka.ACL{Name: "*", Op: kafka.Write}, kafka.ACL{Name: "*", Op: kafka.Describe})
	k.login(tb)
	return k
}

// Stop stops the broker (its log stays for Start).
func (k *TenantKafka) Stop(tb testing.TB) {
	tb.Helper()
	if out, err := secureStack(k.root, k.env, "down"); err != nil {
		tb.Fatalf("dev/kafka/secure-stack.sh down: %v\n%s", err, out)
	}
}

// Start starts the broker again and waits until it answers.
func (k *TenantKafka) Start(tb testing.TB) {
	tb.Helper()
	if out, err := secureStack(k.root, k.env, "up"); err != nil {
		tb.Fatalf("dev/kafka/secure-stack.sh up: %v\n%s", err, out)
	}
	if err := until(context.Background(), func() error {
		_, err := k.admin.ListBrokers(context.Background())
		return err
	}); err != nil {
		tb.Fatal(fmt.Errorf("the tenant's Kafka after its start: %w", err))
	}
	k.login(tb)
}

// login upserts the test's user and waits until it can log in.
func (k *TenantKafka) login(tb testing.TB) {
	tb.Helper()
	if err := k.upsertUser(context.Background(), k.User, k.Password); err != nil {
		tb.Fatal(err)
	}
}
