package main

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/internal/pipeline"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The admin API under Schemathesis (dev/schemathesis): every operation,
// every check, against the admin listener of a process running every
// stage on a database of its own, with an unscoped operate token and one
// tenant with one of everything. Schemathesis must report no server
// error, no status the document or dev/schemathesis/schemathesis.toml
// does not allow, no request violating the document accepted, and no
// answer violating it. SLUICE_SCHEMATHESIS names the st binary (make
// test installs it, see dev/schemathesis/run.sh); without it the test
// is skipped.
func TestAdminAPIUnderSchemathesis(t *testing.T) {
	st := os.Getenv("SLUICE_SCHEMATHESIS")
	if st == "" {
		t.Skip("SLUICE_SCHEMATHESIS names no Schemathesis (make test sets it)")
	}
	ctx := context.Background()
	services := testenv.Require(t)
	dbURL, pool := ownDatabase(t, "schemathesis")
	key := newKey(t)
	ring, err := keyring.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	suffix := testenv.RandomSuffix()
	cfg := pipeline.Config{DatabaseURL: dbURL, Kafka: kafka.Config{Brokers: services.Brokers}, SecretKey: key,
		HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Topics: envelope.Topics{Prefix: "st" + suffix + ".sluice"},
		TopicSpec: kafka.TopicSpec{Partitions: 1, Retention: time.Hour}, Ingest: true, CDC: true, Consume: true,
		// The authentication run sends a request without a valid token for
		// each case: a budget it is paced below (authRate).
		AdminFailedAuthRate: 20, AdminFailedAuthBurst: 40}
	cfg.CDCConfig.Slot = "sluice_st_" + suffix
	pctx, stop := context.WithCancel(ctx)
	p, err := pipeline.Start(pctx, cfg, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stop()
		_ = p.Wait()
		deleteTopics(cfg.Topics.Resource(""))
	})
	newTenantIn(t, tenancy.Store{Pool: pool, Ring: ring})
	_, token, err := admintoken.Store{Pool: pool}.Create(ctx, admintoken.New{Role: admintoken.RoleOperate, Name: "schemathesis"})
	if err != nil {
		t.Fatal(err)
	}
	// What the run may revoke: a token of its own, never the one it runs
	// with (it learns every token's id from the list).
	decoy, _, err := admintoken.Store{Pool: pool}.Create(ctx, admintoken.New{Role: admintoken.RoleRead, Name: "schemathesis decoy"})
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	reports := t.TempDir()
	if dir := os.Getenv("SLUICE_SCHEMATHESIS_REPORTS"); dir != "" {
		reports = dir
	}
	config := filepath.Join(root, "dev/schemathesis/schemathesis.toml")
	document := "http://" + p.AdminAddr().String() + "/admin/v1/openapi.json"
	for _, run := range []struct {
		name string
		args []string
	}{
		{"every check but authentication's", []string{"--exclude-checks", "ignored_auth,missing_required_header"}},
		// Each case sends up to two requests without a valid token, each
		// spending the address's budget of failed authentications (20/s
		// here): paced below it.
		{"authentication", []string{"--checks", "ignored_auth,missing_required_header", "--phases", "fuzzing", "--max-examples", "2",
			"--rate-limit", "480/m"}},
	} {
		args := append([]string{"--config-file", config, "run", document, "--report", "junit,har", "--output-sanitize", "false", "--report-dir", filepath.Join(reports, run.name)}, run.args...)
		cmd := exec.CommandContext(ctx, st, args...)
		cmd.Env = append(os.Environ(), "SLUICE_ADMIN_TOKEN="+token, "SLUICE_DECOY_TOKEN_ID="+decoy.ID)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		cmd.Dir = t.TempDir() // its cache of crashes, not in the tree
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Errorf("Schemathesis (%s) found the admin API at fault (%v, after %s): its report is above", run.name, err, time.Since(start).Round(time.Second))
			continue
		}
		t.Logf("Schemathesis (%s) passed in %s", run.name, time.Since(start).Round(time.Second))
	}
}
