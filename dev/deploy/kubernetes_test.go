package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

var manifestDir = filepath.Join(repoRoot, "cmd", "sluice", "kubernetes")

// manifests is every object of the kustomization, decoded strictly into
// its k8s.io/api type: an unknown or misspelt field fails, as the API
// server's strict field validation would.
type manifests struct {
	deployments map[string]*appsv1.Deployment
	jobs        map[string]*batchv1.Job
	services    map[string]*corev1.Service
	configMaps  map[string]*corev1.ConfigMap
	pdbs        map[string]*policyv1.PodDisruptionBudget
	policies    map[string]*networkingv1.NetworkPolicy
}

// kustomization is the part of kustomize's file this test reads.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Labels     []struct {
		Pairs map[string]string `json:"pairs"`
	} `json:"labels"`
	Images []struct {
		Name    string `json:"name"`
		NewName string `json:"newName"`
		NewTag  string `json:"newTag"`
	} `json:"images"`
}

func strict(doc []byte, into any) error {
	raw, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

func loadManifests(t *testing.T) (*manifests, kustomization) {
	t.Helper()
	var k kustomization
	raw, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := strict(raw, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	m := &manifests{deployments: map[string]*appsv1.Deployment{}, jobs: map[string]*batchv1.Job{}, services: map[string]*corev1.Service{},
		configMaps: map[string]*corev1.ConfigMap{}, pdbs: map[string]*policyv1.PodDisruptionBudget{}, policies: map[string]*networkingv1.NetworkPolicy{}}
	for _, file := range k.Resources {
		raw, err := os.ReadFile(filepath.Join(manifestDir, file))
		if err != nil {
			t.Fatalf("kustomization lists %s: %v", file, err)
		}
		for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
			if err := m.add(doc); err != nil {
				t.Errorf("%s, document %d: %v", file, i+1, err)
			}
		}
	}
	return m, k
}

func (m *manifests) add(doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	decode := func(into interface{ GetName() string }, dst func()) error {
		if err := strict(doc, into); err != nil {
			return err
		}
		if into.GetName() == "" {
			return fmt.Errorf("%s without a name", head.Kind)
		}
		dst()
		return nil
	}
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		var o appsv1.Deployment
		return decode(&o, func() { m.deployments[o.Name] = &o })
	case "batch/v1 Job":
		var o batchv1.Job
		return decode(&o, func() { m.jobs[o.Name] = &o })
	case "v1 Service":
		var o corev1.Service
		return decode(&o, func() { m.services[o.Name] = &o })
	case "v1 ConfigMap":
		var o corev1.ConfigMap
		return decode(&o, func() { m.configMaps[o.Name] = &o })
	case "policy/v1 PodDisruptionBudget":
		var o policyv1.PodDisruptionBudget
		return decode(&o, func() { m.pdbs[o.Name] = &o })
	case "networking.k8s.io/v1 NetworkPolicy":
		var o networkingv1.NetworkPolicy
		return decode(&o, func() { m.policies[o.Name] = &o })
	}
	return fmt.Errorf("unexpected %s %s", head.APIVersion, head.Kind)
}

// Every stage runs as the README's Kubernetes section says: the right
// command, probes on the endpoints that mean what they check, a grace period
// above the drain, requests set, secrets only from the Secret, a disruption
// budget, and only ingest open to the world.
func TestKubernetesManifestsRunEveryStageSafely(t *testing.T) {
	t.Parallel()
	m, k := loadManifests(t)
	if k.Kind != "Kustomization" || len(k.Images) != 1 || k.Images[0].NewTag == "" || k.Images[0].NewTag == "latest" {
		t.Errorf("kustomization: %+v; want one pinned image", k)
	}
	stages := map[string]struct {
		args      string
		readiness bool   // serves traffic or reports a stage that can work
		role      string // the Secret's key of its own database URL
	}{
		"sluice-ingest":  {"ingest", true, "ingest-database-url"},
		"sluice-cdc":     {"cdc", false, "relay-database-url"}, // a standby is healthy without being ready
		"sluice-consume": {"consume", true, "consumers-database-url"},
	}
	for name, want := range stages {
		d, ok := m.deployments[name]
		if !ok {
			t.Errorf("no deployment %s", name)
			continue
		}
		spec := d.Spec.Template.Spec
		if len(spec.Containers) != 1 {
			t.Errorf("%s: %d containers", name, len(spec.Containers))
			continue
		}
		c := spec.Containers[0]
		if strings.Join(c.Args, " ") != want.args {
			t.Errorf("%s runs %v, want %s", name, c.Args, want.args)
		}
		if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
			t.Errorf("%s: liveness must ask /healthz (alive), not readiness: %+v", name, p)
		}
		if want.readiness {
			if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
				t.Errorf("%s: readiness must ask /readyz: %+v", name, p)
			}
		} else if c.ReadinessProbe != nil {
			t.Errorf("%s: a standby relay is never ready, so a readiness probe would stall every rollout", name)
		}
		if g := spec.TerminationGracePeriodSeconds; g == nil || *g <= 30 {
			t.Errorf("%s: termination grace %v does not cover the 20 s drain and a batch", name, g)
		}
		if c.Resources.Requests.Memory().IsZero() || c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("%s: requests and a memory limit must be set: %+v", name, c.Resources)
		}
		checkSecrets(t, name, c)
		checkRoles(t, name, c, want.role)
		if s := c.SecurityContext; s == nil || s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem {
			t.Errorf("%s: the root filesystem should be read-only", name)
		}
		if !coveredByPDB(m, d) {
			t.Errorf("%s: no PodDisruptionBudget selects its pods", name)
		}
	}
	if svc, ok := m.services["sluice-ingest"]; !ok || svc.Spec.Selector["app.kubernetes.io/component"] != "ingest" {
		t.Error("no Service in front of ingest")
	}
	for name, svc := range m.services {
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.String() != "http" {
				t.Errorf("Service %s exposes %s: only the webhook port belongs behind a Service", name, p.TargetPort.String())
			}
		}
	}
	if cm := m.configMaps["sluice"]; cm == nil || cm.Data["SLUICE_ADMIN_ADDR"] != ":8082" {
		t.Error("the admin listener must bind the pod network (:8082) for the monitoring namespace to reach it")
	}
	for name, d := range m.deployments {
		if _, ok := stages[name]; !ok {
			t.Errorf("deployment %s is not checked by this test", name)
		}
		labels := d.Spec.Template.Labels
		if who := openTo(m, labels, "admin"); who != "monitoring" {
			t.Errorf("%s: its admin port is open to %q, want the monitoring namespace alone", name, who)
		}
		wantHTTP := "monitoring"
		if name == "sluice-ingest" {
			wantHTTP = "anyone"
		}
		if who := openTo(m, labels, "http"); who != wantHTTP {
			t.Errorf("%s: its http port is open to %q, want %q", name, who, wantHTTP)
		}
		c := d.Spec.Template.Spec.Containers[0]
		if !slices.ContainsFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "admin" && p.ContainerPort == 8082 }) {
			t.Errorf("%s: no admin port 8082 declared", name)
		}
	}
	if j, ok := m.jobs["sluice-migrate"]; !ok || j.Spec.Template.Spec.Containers[0].Args[0] != "migrate" ||
		secretKey(j.Spec.Template.Spec.Containers[0], "SLUICE_DATABASE_URL") != "owner-database-url" {
		t.Error("no migrate Job running as the schema's owner")
	}
	if cm := m.configMaps["sluice"]; cm == nil || cm.Data["SLUICE_MIGRATE"] != "false" {
		t.Error("stages must not each migrate at start: the Job does")
	}
	checkOneChoiceOfGroups(t, m)
}

// checkOneChoiceOfGroups: every process reads the ConfigMap, where a
// deployment names its effect groups (SLUICE_EFFECT_GROUPS), and none sets
// its own: the stages run the groups the migrate Job granted their roles
// the tables of (`migrate --grant` grants the running groups' tables
// only), and lag, dead letters and trails name the same groups.
func checkOneChoiceOfGroups(t *testing.T, m *manifests) {
	t.Helper()
	containers := map[string]corev1.Container{}
	for name, d := range m.deployments {
		containers[name] = d.Spec.Template.Spec.Containers[0]
	}
	for name, j := range m.jobs {
		containers[name] = j.Spec.Template.Spec.Containers[0]
	}
	for name, c := range containers {
		if !slices.ContainsFunc(c.EnvFrom, func(e corev1.EnvFromSource) bool { return e.ConfigMapRef != nil && e.ConfigMapRef.Name == "sluice" }) {
			t.Errorf("%s does not read the ConfigMap sluice, where the deployment's SLUICE_EFFECT_GROUPS is set", name)
		}
		if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "SLUICE_EFFECT_GROUPS" }) {
			t.Errorf("%s sets SLUICE_EFFECT_GROUPS of its own: every process of a deployment takes the ConfigMap's", name)
		}
	}
}

// checkSecrets: what is secret comes from the Secret "sluice", never a literal.
func checkSecrets(t *testing.T, name string, c corev1.Container) {
	t.Helper()
	for _, e := range c.Env {
		secret := strings.Contains(e.Name, "DATABASE_URL") || strings.Contains(e.Name, "SECRET") || strings.Contains(e.Name, "PASSWORD")
		if !secret {
			continue
		}
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "sluice" {
			t.Errorf("%s: %s must come from the Secret sluice", name, e.Name)
		}
	}
}

// checkRoles: each stage connects as its own role, and only ingest, whose
// lifecycle manager creates and drops partitions, holds the owner's URL.
func checkRoles(t *testing.T, name string, c corev1.Container, role string) {
	t.Helper()
	if got := secretKey(c, "SLUICE_DATABASE_URL"); got != role {
		t.Errorf("%s connects with %q, want its own role's %q", name, got, role)
	}
	if got, want := secretKey(c, "SLUICE_OWNER_DATABASE_URL"), map[bool]string{true: "owner-database-url"}[name == "sluice-ingest"]; got != want {
		t.Errorf("%s holds the owner's URL as %q, want %q", name, got, want)
	}
	if got := secretKey(c, "SLUICE_ADMIN_DATABASE_URL"); got != "admin-database-url" {
		t.Errorf("%s's admin listener connects with %q, want the admin role's", name, got)
	}
}

// secretKey is the key of the Secret variable name comes from, "" when none.
func secretKey(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return e.ValueFrom.SecretKeyRef.Key
		}
	}
	return ""
}

func coveredByPDB(m *manifests, d *appsv1.Deployment) bool {
	for _, p := range m.pdbs {
		if selects(p.Spec.Selector.MatchLabels, d.Spec.Template.Labels) && (p.Spec.MaxUnavailable != nil || p.Spec.MinAvailable != nil) {
			return true
		}
	}
	return false
}

// openTo says who the NetworkPolicies let reach a pod's named port:
// "anyone", "monitoring" (that namespace alone) or "" (nobody; a pod no
// policy selects would be open to anyone, but every pod here is selected).
func openTo(m *manifests, labels map[string]string, port string) string {
	who := ""
	for _, p := range m.policies {
		if !policySelects(p, labels) {
			continue
		}
		for _, rule := range p.Spec.Ingress {
			if len(rule.Ports) > 0 && !slices.ContainsFunc(rule.Ports, func(np networkingv1.NetworkPolicyPort) bool {
				return np.Port != nil && np.Port.String() == port
			}) {
				continue
			}
			if len(rule.From) == 0 {
				return "anyone"
			}
			for _, from := range rule.From {
				if from.NamespaceSelector == nil || from.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring" || from.IPBlock != nil {
					return "anyone"
				}
			}
			who = "monitoring"
		}
	}
	return who
}

func policySelects(p *networkingv1.NetworkPolicy, labels map[string]string) bool {
	sel := p.Spec.PodSelector
	matches := len(sel.MatchExpressions) > 0 || selects(sel.MatchLabels, labels)
	for k, v := range sel.MatchLabels {
		matches = matches && labels[k] == v
	}
	for _, e := range sel.MatchExpressions {
		matches = matches && e.Operator == "In" && slices.Contains(e.Values, labels[e.Key])
	}
	return matches && slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
}

func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}
