package testenv

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RabbitMQ is a RabbitMQ node of one test's own (Debian's rabbitmq-server,
// run by dev/rabbitmq/rabbitmq.sh on ports of its own, its state in the
// test's temporary directory), so the test may stop it, kill it and start
// it again without touching any other's. It is removed when the test ends.
type RabbitMQ struct {
	// URL is amqp://127.0.0.1:port/ (no credentials: they are apart).
	URL            string
	User, Password string

	dir, port, script string
}

// StartRabbitMQ starts a node for tb or fails it. Its port is
// SLUICE_TEST_RABBITMQ_PORT when set (with the next two for Erlang's
// distribution and epmd), else a free one.
func StartRabbitMQ(tb testing.TB) *RabbitMQ {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	port := os.Getenv("SLUICE_TEST_RABBITMQ_PORT")
	if port == "" {
		if port, err = FreePorts(3); err != nil {
			tb.Fatal(err)
		}
	}
	r := &RabbitMQ{dir: filepath.Join(tb.TempDir(), "rabbitmq"), port: port, script: filepath.Join(root, "dev/rabbitmq/rabbitmq.sh")}
	tb.Cleanup(func() { _, _ = r.run("down") })
	r.Start(tb)
	env, err := ReadEnv(filepath.Join(r.dir, "env"))
	if err != nil {
		tb.Fatal(err)
	}
	r.URL, r.User, r.Password = env["RABBITMQ_URL"], env["RABBITMQ_USER"], env["RABBITMQ_PASSWORD"]
	return r
}

// Start starts the node (again), with the state it had.
func (r *RabbitMQ) Start(tb testing.TB) {
	tb.Helper()
	if out, err := r.run("up", r.port); err != nil {
		tb.Fatalf("dev/rabbitmq/rabbitmq.sh up: %v\n%s", err, out)
	}
}

// Stop stops the node the way an operator does (its durable queues and
// persistent messages stay for the next Start).
func (r *RabbitMQ) Stop(tb testing.TB) {
	tb.Helper()
	if out, err := r.run("stop"); err != nil {
		tb.Fatalf("dev/rabbitmq/rabbitmq.sh stop: %v\n%s", err, out)
	}
}

// AMQPURL is the node's URL with its credentials, for the test's own
// clients.
func (r *RabbitMQ) AMQPURL() string {
	return strings.Replace(r.URL, "amqp://", "amqp://"+r.User+":"+r.Password+"@", 1)
}

func (r *RabbitMQ) run(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{r.script, args[0], r.dir}, args[1:]...)...)
	return cmd.CombinedOutput()
}

// FreePorts finds n consecutive free ports on 127.0.0.1 and returns the
// first.
func FreePorts(n int) (string, error) {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		first := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		ok := first+n <= 65535
		for p := first + 1; ok && p < first+n; p++ {
			c, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if ok = err == nil; ok {
				_ = c.Close()
			}
		}
		if ok {
			return strconv.Itoa(first), nil
		}
	}
	return "", fmt.Errorf("no %d consecutive free ports", n)
}

// ReadEnv reads KEY=VALUE lines (the env files dev/ scripts write).
func ReadEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	return env, sc.Err()
}
