// Package monitoring checks the alert rules and the Grafana dashboard in
// cmd/sluice/monitoring against what Sluice really exports: every PromQL
// expression parses with Prometheus's own parser, and every metric it
// names is in a scrape of a running pipeline (written by the e2e test
// TestScrapeForTheMonitoringCheck; make monitoring-check runs both).
//
// It is a module of its own so that Sluice's go.mod never carries
// Prometheus's server dependencies; promtool, built from the same
// version, runs the rules' unit tests.
package monitoring
