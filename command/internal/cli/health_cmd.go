package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// HealthCmd asks a running process whether it is ready: the container
// health check of an image that has no shell or curl. It asks where the
// process listens by the same settings (SLUICE_HTTP_ADDR, or with --admin
// SLUICE_ADMIN_ADDR), so a health check beside a process needs no URL.
type HealthCmd struct {
	URL       string        `name:"url" env:"SLUICE_HEALTH_URL" help:"Readiness endpoint to ask (https:// for a listener serving TLS); default: /readyz where --http-addr (or, with --admin, --admin-addr) listens." input:"max=2048"`
	Admin     bool          `name:"admin" help:"Ask the admin listener's /readyz, which checks every stage the process runs (the public one checks what ingest needs)."`
	HTTPAddr  string        `name:"http-addr" env:"SLUICE_HTTP_ADDR" default:":8080" help:"Where the process's public listener is (as serve's --http-addr)."`
	AdminAddr string        `name:"admin-addr" env:"SLUICE_ADMIN_ADDR" default:"127.0.0.1:8082" help:"Where the process's admin listener is (as serve's --admin-addr)."`
	Timeout   time.Duration `name:"timeout" default:"3s" help:"How long to wait for the answer."`
}

// readyURL is the URL the check asks: --url, or /readyz on the listener's
// address, its host made one this machine dials (an address listening on
// every interface is asked on loopback).
func (c *HealthCmd) readyURL() (string, error) {
	if c.URL != "" {
		return c.URL, nil
	}
	addr, flag := c.HTTPAddr, "--http-addr"
	if c.Admin {
		addr, flag = c.AdminAddr, "--admin-addr"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("%s %q: want host:port or :port, or give --url", flag, addr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	// A listener serving TLS is asked with --url (https://, the name its
	// certificate is for).
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}

func (c *HealthCmd) Run(ctx context.Context) error {
	url, err := c.readyURL()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
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
		return fmt.Errorf("health: %s answered %d: %s", url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return nil
}
