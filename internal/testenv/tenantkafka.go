package testenv

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
)

// TenantKafka is a Kafka cluster other than the deployment's, of one
// test's own, as a tenant's cluster is to Sluice: dev/kafka/secure-stack.sh
// with a name and ports of its own (SASL_SSL with SCRAM, a throwaway CA),
// which the test may stop and start again. It is stopped when the test
// ends; its state stays under .run/ for the next run.
type TenantKafka struct {
	*SecureKafka
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
		if port, err = freePorts(3); err != nil {
			tb.Fatal(err)
		}
		if controller, err = freePorts(1); err != nil {
			tb.Fatal(err)
		}
	}
	if controller == "" {
		n, _ := strconv.Atoi(port)
		controller = strconv.Itoa(n + 10000)
	}
	k := &TenantKafka{root: root, env: []string{"SLUICE_SECURE_KAFKA_NAME=kafka-tenant-" + port,
		"SLUICE_SECURE_KAFKA_PORT=" + port, "SLUICE_SECURE_KAFKA_CONTROLLER_PORT=" + controller}}
	tb.Cleanup(func() { _, _ = secureStack(root, k.env, "down") })
	env, err := startSecureStack(k.env)
	if err != nil {
		tb.Fatal(err)
	}
	if k.SecureKafka, err = secureKafkaOf(env); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { k.admin.Close() })
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
}
