package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCheckedInClientsAreWhatTheDocumentGenerates regenerates the admin
// API's clients from the document this binary serves (`sluice docs
// openapi`) with the pinned generators, into a temporary folder, and fails
// on any file that differs from the checked-in one (run make clients). It
// needs the generators: SLUICE_CLIENT_GENERATORS=1 with OAPI_CODEGEN,
// OPENAPI_PYTHON_CLIENT and OPENAPI_TYPESCRIPT set (make test sets them);
// without it the test is skipped.
func TestCheckedInClientsAreWhatTheDocumentGenerates(t *testing.T) {
	t.Parallel()
	if os.Getenv("SLUICE_CLIENT_GENERATORS") == "" {
		t.Skip("SLUICE_CLIENT_GENERATORS is unset: the generators may not be installed (make test sets it)")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []struct{ file, version string }{{"openapi.json", "3.1"}, {"openapi-3.0.json", "3.0"}} {
		out, errOut, code := cliWith(t, hostEnvironWithout("SLUICE_"), "docs", "openapi", "--openapi-version", d.version)
		if code != 0 {
			t.Fatalf("sluice docs openapi --openapi-version %s: exit %d\n%s", d.version, code, errOut)
		}
		if err := os.WriteFile(filepath.Join(dir, d.file), []byte(out), 0o600); err != nil {
			t.Fatal(err)
		}
		// The document printed for the suite's endpoint policy is the one
		// its serve serves.
		same, errOut, code := cliWith(t, hostEnvironWithout("SLUICE_"), "docs", "openapi", "--openapi-version", d.version, "--delivery-allow-http")
		if code != 0 {
			t.Fatalf("sluice docs openapi --delivery-allow-http: exit %d\n%s", code, errOut)
		}
		if served := servedDocument(t, "/admin/v1/"+d.file); !jsonEqual(t, served, []byte(same)) {
			t.Errorf("sluice docs openapi --openapi-version %s --delivery-allow-http is not what serve serves at /admin/v1/%s", d.version, d.file)
		}
	}
	out := filepath.Join(dir, "out")
	gen := exec.Command("bash", filepath.Join(root, "dev/clients/generate.sh"), filepath.Join(dir, "openapi.json"), filepath.Join(dir, "openapi-3.0.json"), out)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("dev/clients/generate.sh: %v\n%s", err, b)
	}
	var differ []string
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		want, _ := os.ReadFile(path)
		got, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil || !bytes.Equal(got, want) {
			differ = append(differ, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A generated file left behind by an operation since removed.
	for _, gen := range []string{"clients/python/src/sluice_admin/generated"} {
		_ = filepath.WalkDir(filepath.Join(root, gen), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || strings.Contains(path, "__pycache__") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if _, err := os.Stat(filepath.Join(out, rel)); err != nil {
				differ = append(differ, rel+" (not generated any more)")
			}
			return nil
		})
	}
	if len(differ) > 0 {
		t.Errorf("these checked-in clients' files are not what the document generates; run make clients:\n  %s", strings.Join(differ, "\n  "))
	}
}

func servedDocument(t *testing.T, path string) []byte {
	t.Helper()
	resp, err := http.Get(suite.adminURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return b
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

// hostEnvironWithout is the test's environment less the variables of a
// prefix, so the document is the defaults' whatever the machine sets.
func hostEnvironWithout(prefix string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// The TypeScript and Python clients carry Sluice's version: the API they
// speak is the release's (Python spells a -dev release .dev0, PEP 440).
func TestClientsAreVersionedWithSluice(t *testing.T) {
	t.Parallel()
	pkg, err := os.ReadFile("../../../clients/typescript/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var npm struct{ Version string }
	if err := json.Unmarshal(pkg, &npm); err != nil {
		t.Fatal(err)
	}
	if npm.Version != Version {
		t.Errorf("clients/typescript/package.json is version %s, Sluice %s", npm.Version, Version)
	}
	pyproject, err := os.ReadFile("../../../clients/python/pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	pep440 := strings.Replace(Version, "-dev", ".dev0", 1)
	if !strings.Contains(string(pyproject), "\nversion = \""+pep440+"\"\n") {
		t.Errorf("clients/python/pyproject.toml is not version %s (Sluice %s)", pep440, Version)
	}
}
