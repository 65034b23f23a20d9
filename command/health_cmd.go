package command

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// HealthCmd asks a running process whether it is ready: the container
// health check of an image that has no shell or curl.
type HealthCmd struct {
	URL     string        `name:"url" env:"SLUICE_HEALTH_URL" default:"http://127.0.0.1:8080/readyz" help:"Readiness endpoint to ask." input:"max=2048"`
	Timeout time.Duration `name:"timeout" default:"3s" help:"How long to wait for the answer."`
}

func (c *HealthCmd) Run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %d: %s", c.URL, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
