package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// The resource types decide topics, so they live in one place every
// process reads: the first process stores its list, one naming another
// refuses to start (and the doctor says so in the same words), and one
// added while a process runs makes that process's admin readiness name the
// difference without taking ingest out of rotation.
func TestProcessesCannotDisagreeOnResourceTypes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "rtypes")
	key := newKey(t)
	start := func(rts ...string) (*pipeline.Process, func(), error) {
		return startIngest(t, pipeline.Config{DatabaseURL: dbURL, SecretKey: key, Catalog: catalog.Config{ResourceTypes: rts}})
	}

	_, stop, err := start("order", "invoice")
	if err != nil {
		t.Fatalf("the first process: %v", err)
	}
	stop()
	if stored, err := catalog.StoredResourceTypes(ctx, pool); err != nil || !slices.Equal(stored, []string{"invoice", "order"}) {
		t.Fatalf("stored after the first process: %v %v, want its list", stored, err)
	}

	_, _, err = start("order", "shipment")
	var mismatch *catalog.ResourceTypesMismatch
	if !errors.As(err, &mismatch) {
		t.Fatalf("a process with another list: %v, want a refusal naming both lists", err)
	}
	env := append(os.Environ(), "SLUICE_DATABASE_URL="+dbURL, "SLUICE_SECRET_KEY="+key, "SLUICE_LOG_LEVEL=warn")
	checks, code := doctor(t, append(env, "SLUICE_TENANT_RESOURCE_TYPES=order,shipment"), "--stage", "ingest")
	line, ok := checks.find("resource_types")
	if code != 1 || !ok || line.OK || !line.Refuse || line.Error != mismatch.Error() {
		t.Fatalf("doctor with another list: exit %d, %+v; want the line the start refused with: %v", code, checks, mismatch)
	}
	if checks, code := doctor(t, env, "--stage", "ingest"); code != 0 {
		t.Fatalf("doctor naming no list of its own: exit %d, %+v", code, checks)
	}

	p, stop, err := start() // no list of its own: the deployment's
	if err != nil {
		t.Fatalf("a process naming no list: %v", err)
	}
	defer stop()
	readyz := func(addr string) (int, string) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if status, body := readyz(p.AdminAddr().String()); status != http.StatusOK {
		t.Fatalf("admin readyz: %d %s", status, body)
	}
	if out, errOut, code := cliWith(t, env, "eventtype", "resource-types", "add", "shipment"); code != 0 {
		t.Fatalf("resource-types add: exit %d %s%s", code, out, errOut)
	}
	if status, body := readyz(p.AdminAddr().String()); status != http.StatusServiceUnavailable || !strings.Contains(body, "resource_types") || !strings.Contains(body, "shipment") {
		t.Fatalf("admin readyz after a resource type was added: %d %s, want 503 naming resource_types", status, body)
	}
	if status, body := readyz(p.Addr().String()); status != http.StatusOK {
		t.Fatalf("ingest's readyz after a resource type was added: %d %s, want ingest kept in rotation", status, body)
	}
}
