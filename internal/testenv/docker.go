package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// startDocker starts Postgres and Kafka in containers. Containers are
// reaped by testcontainers' reaper when the test binary exits.
func startDocker(ctx context.Context) (*Services, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return nil, fmt.Errorf("docker provider: %w", err)
	}
	defer provider.Close()
	if err := provider.Health(ctx); err != nil {
		return nil, fmt.Errorf("docker engine not reachable: %w", err)
	}

	pgC, err := testcontainers.Run(ctx, "postgres:15",
		testcontainers.WithEnv(map[string]string{"POSTGRES_PASSWORD": "sluice", "POSTGRES_DB": "sluice"}),
		testcontainers.WithCmd("postgres", "-c", "wal_level=logical", "-c", "max_replication_slots=32",
			"-c", "max_wal_senders=32", "-c", "max_connections=300"),
		testcontainers.WithExposedPorts("5432/tcp"),
		testcontainers.WithWaitStrategy(wait.ForLog("database system is ready to accept connections").WithOccurrence(2)),
	)
	if err != nil {
		return nil, fmt.Errorf("start postgres container: %w", err)
	}
	pgAddr, err := pgC.PortEndpoint(ctx, "5432/tcp", "")
	if err != nil {
		return nil, err
	}

	// Kafka must advertise the address the host reaches it on, which is only
	// known once a port is chosen: choose it first and bind it explicitly.
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	kafkaPort := "9092/tcp"
	kC, err := testcontainers.Run(ctx, "apache/kafka:4.1.1",
		testcontainers.WithEnv(map[string]string{
			"KAFKA_NODE_ID":                                  "1",
			"KAFKA_PROCESS_ROLES":                            "broker,controller",
			"KAFKA_LISTENERS":                                "PLAINTEXT://:9092,CONTROLLER://:9093",
			"KAFKA_ADVERTISED_LISTENERS":                     "PLAINTEXT://127.0.0.1:" + strconv.Itoa(port),
			"KAFKA_CONTROLLER_LISTENER_NAMES":                "CONTROLLER",
			"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":           "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
			"KAFKA_CONTROLLER_QUORUM_VOTERS":                 "1@localhost:9093",
			"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         "1",
			"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
			"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            "1",
			"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":         "0",
			"KAFKA_AUTO_CREATE_TOPICS_ENABLE":                "false",
		}),
		testcontainers.WithExposedPorts(kafkaPort),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{network.MustParsePort(kafkaPort): {{HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(port)}}}
		}),
		testcontainers.WithWaitStrategy(wait.ForListeningPort(kafkaPort)),
	)
	if err != nil {
		return nil, fmt.Errorf("start kafka container: %w", err)
	}
	if _, err := kC.PortEndpoint(ctx, kafkaPort, ""); err != nil {
		return nil, fmt.Errorf("kafka container port: %w", err)
	}
	return &Services{
		DatabaseURL: "postgres://postgres:sluice@" + pgAddr + "/sluice?sslmode=disable",
		Brokers:     []string{"127.0.0.1:" + strconv.Itoa(port)},
		Origin:      "docker",
	}, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("no tcp port")
	}
	return addr.Port, nil
}
