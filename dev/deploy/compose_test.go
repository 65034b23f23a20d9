package deploy

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

// repoRoot is where the deployment files live, seen from this package.
var repoRoot = filepath.Join("..", "..")

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join(repoRoot, "docker-compose.yml")},
		cli.WithEnv([]string{"SLUICE_SECRET_KEY=test"}), cli.WithWorkingDirectory(repoRoot))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("the compose specification's loader refuses docker-compose.yml: %v", err)
	}
	return p
}

// The compose file keeps its data across `down` and `up`, pins what it
// runs, bounds the WAL a stopped Sluice can pin, and checks every service's
// health, as the README says.
func TestComposeKeepsItsDataAndChecksEveryService(t *testing.T) {
	t.Parallel()
	p := loadCompose(t)
	for _, name := range []string{"postgres", "kafka", "kafka-ui", "sluice"} {
		svc, ok := p.Services[name]
		if !ok {
			t.Errorf("no %s service", name)
			continue
		}
		if svc.HealthCheck == nil || len(svc.HealthCheck.Test) == 0 || svc.HealthCheck.Disable {
			t.Errorf("%s has no health check", name)
		}
		if svc.Build == nil && (!strings.Contains(svc.Image, ":") || strings.HasSuffix(svc.Image, ":latest")) {
			t.Errorf("%s runs %q: pin a tag", name, svc.Image)
		}
	}

	// Each stateful service writes where its named volume is mounted.
	mounted := func(svc, dir string) bool {
		return slices.ContainsFunc(p.Services[svc].Volumes, func(v types.ServiceVolumeConfig) bool {
			return v.Type == types.VolumeTypeVolume && v.Target == dir
		})
	}
	if !mounted("postgres", "/var/lib/postgresql/data") {
		t.Error("postgres data is not on a named volume")
	}
	logDirs := p.Services["kafka"].Environment["KAFKA_LOG_DIRS"]
	if logDirs == nil || !mounted("kafka", *logDirs) {
		t.Errorf("kafka writes to %v, which is not its volume: topics and offsets would not survive down/up", logDirs)
	}

	pg := strings.Join(p.Services["postgres"].Command, " ")
	for _, want := range []string{"wal_level=logical", "max_slot_wal_keep_size="} {
		if !strings.Contains(pg, want) {
			t.Errorf("postgres runs without %s", want)
		}
	}
	if hc := p.Services["sluice"].HealthCheck; hc == nil || !slices.Equal(hc.Test, types.HealthCheckTest{"CMD", "/usr/local/bin/sluice", "health"}) {
		t.Errorf("sluice's health check is %v, want its own `sluice health` (the image has no shell)", hc)
	}
	// The admin listener is for operators: published on the host's
	// loopback at most, never on every interface.
	admin := false
	for _, port := range p.Services["sluice"].Ports {
		if port.Target == 8082 {
			admin = true
			if port.HostIP != "127.0.0.1" {
				t.Errorf("sluice publishes its admin port on %q, want 127.0.0.1 only", port.HostIP)
			}
		}
	}
	if addr := p.Services["sluice"].Environment["SLUICE_ADMIN_ADDR"]; addr == nil || *addr != ":8082" || !admin {
		t.Errorf("sluice's admin listener: SLUICE_ADMIN_ADDR %v, published %v; want :8082 on the compose network and the host's loopback", addr, admin)
	}
	if g := p.Services["sluice"].StopGracePeriod; g == nil || time.Duration(*g) <= 20*time.Second {
		t.Errorf("sluice's stop grace period %v does not leave its 20 s drain room", g)
	}
}
