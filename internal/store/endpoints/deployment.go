package endpoints

import (
	"context"
	"fmt"

	"github.com/google/uuid"
)

// deploymentSpace names the deployments' endpoint ids.
var deploymentSpace = uuid.MustParse("5110ce00-d15a-4a7c-8000-000000000001")

// DeploymentEndpointID is the id of the own endpoint (--dispatch-url) of the
// deployment whose topic prefix is prefix: the operator's service for the
// built-in effects' intents, delivered like a tenant's endpoint. It belongs
// to no tenant; its URL and secret are the deployment's flags; the
// endpoints API never finds it, and a tenant never sees its deliveries
// (migration 00031). Derived from the prefix, so every process of the
// deployment names it alike and deployments sharing a database do not.
func DeploymentEndpointID(prefix string) string {
	return uuid.NewSHA1(deploymentSpace, []byte(prefix)).String()
}

// EnsureDeploymentEndpoint writes the row of deployment prefix's endpoint,
// enabled, with url for operators to read (the deliverer sends to its own
// flag).
func (s Store) EnsureDeploymentEndpoint(ctx context.Context, prefix, url string) error {
	_, err := s.Pool.Exec(ctx, `INSERT INTO endpoints (id, tenant_id, deployment, url, description, filters, ordered)
VALUES ($1, NULL, $2, $3, 'the deployment''s --dispatch-url', '{}', true)
ON CONFLICT (id) DO UPDATE SET url = excluded.url, disabled_at = NULL, disabled_reason = NULL, updated_at = now()
WHERE endpoints.url <> excluded.url OR endpoints.disabled_at IS NOT NULL`, DeploymentEndpointID(prefix), prefix, url)
	if err != nil {
		return fmt.Errorf("write the deployment's endpoint: %w", err)
	}
	return nil
}
