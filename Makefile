# Sluice: the two commands a new user needs are `make run` and `make test`.
# Both start what they need (PostgreSQL 15 and Kafka 4.x as local processes,
# state under .run/); see README.md.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

# Every recipe that talks to the services loads the endpoints `make up` wrote.
WITH_ENV := set -a; . .run/env; set +a;
GO_TEST_FLAGS ?= -count=1 -timeout 25m
# Every build and test leaves out gin's MessagePack binding, which Sluice
# never uses and which is the slowest package of a cold build
# (docs/dependencies.md); the go commands the recipes and the tests run
# read it from the environment.
export GOFLAGS := $(strip $(GOFLAGS) -tags=nomsgpack)

.PHONY: help up down clean build run clients test test-unit monitoring-check bench bench-guard bench-docs docs chaos vet fmt chromium strace rabbitmq elasticmq console-screenshots

help: ## List the targets.
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

up: ## Start local PostgreSQL 15 (logical) and Kafka 4.x (KRaft) in the background; write .run/env.
	@bash dev/up.sh

down: ## Stop the local services.
	@bash dev/down.sh

clean: ## Stop the services and remove all local state (.run/).
	@bash dev/clean.sh

build: ## Build bin/sluice (a long build says so first, and how long it should take).
	@bash dev/build.sh

# The services start while bin/sluice compiles: on a first run each waits on
# the other's idle moments rather than on its own.
run: ## Run the pipeline: services, migrations, the demo tenant (a grant, a conflict, a dead letter, an event type, an endpoint, a reconciliation), URLs printed.
	@$(MAKE) --no-print-directory -j2 up build
	@bash dev/run.sh

# Schemathesis, installed once per version from PyPI into a virtual
# environment under .run/tools/: command's TestAdminAPIUnderSchemathesis
# runs it against the admin API (dev/schemathesis/schemathesis.toml).
SCHEMATHESIS_VERSION := 4.32.5
SCHEMATHESIS := .run/tools/schemathesis-$(SCHEMATHESIS_VERSION)/bin/st

$(SCHEMATHESIS):
	@bash dev/schemathesis/install.sh $(SCHEMATHESIS_VERSION) $(patsubst %/bin/st,%,$@)

# squawk, the Postgres migration linter, installed once per version from
# PyPI into a virtual environment under .run/tools/: migrations'
# TestEveryMigrationPassesSquawk runs it over every migration (.squawk.toml).
SQUAWK_VERSION := 2.70.0
SQUAWK := .run/tools/squawk-$(SQUAWK_VERSION)/bin/squawk

$(SQUAWK):
	@bash dev/squawk/install.sh $(SQUAWK_VERSION) $(patsubst %/bin/squawk,%,$@)

# The Python orders consumer (examples/python-orders): its pinned
# requirements installed from PyPI into a virtual environment under
# .run/tools/, one per version of them; make test runs the example through
# the kit with it. No python3 with venv: the install fails, saying so.
PYORDERS_REQUIREMENTS := examples/python-orders/requirements.txt
PYORDERS := .run/tools/python-orders-$(shell sha256sum $(PYORDERS_REQUIREMENTS) | cut -c1-12)/bin/python

$(PYORDERS):
	@bash examples/python-orders/install.sh $(patsubst %/bin/python,%,$@)

# The admin API's clients (adminclient/, clients/typescript, clients/python),
# generated from the document the binary serves (`sluice docs openapi`) by
# generators pinned here and in clients/typescript's lockfile, each
# installed once per version under .run/tools/ (docs/dependencies.md says why
# each). command/internal/cli's TestCheckedInClientsAreWhatTheDocumentGenerates
# fails when a checked-in client differs from what they make.
OAPI_CODEGEN_VERSION := v2.8.2
OAPI_CODEGEN := .run/tools/oapi-codegen-$(OAPI_CODEGEN_VERSION)/oapi-codegen
OPENAPI_PYTHON_CLIENT_VERSION := 0.29.1
OPENAPI_PYTHON_CLIENT := .run/tools/openapi-python-client-$(OPENAPI_PYTHON_CLIENT_VERSION)/bin/openapi-python-client
TS_CLIENT := clients/typescript/node_modules/.sluice-lock-$(shell sha256sum clients/typescript/package-lock.json | cut -c1-12)
PYCLIENT := .run/tools/python-client-$(shell cat clients/python/requirements-test.txt clients/python/pyproject.toml | sha256sum | cut -c1-12)/bin/python
CLIENT_TOOLS := OAPI_CODEGEN=$(CURDIR)/$(OAPI_CODEGEN) OPENAPI_PYTHON_CLIENT=$(CURDIR)/$(OPENAPI_PYTHON_CLIENT) OPENAPI_TYPESCRIPT=$(CURDIR)/clients/typescript/node_modules/.bin/openapi-typescript

$(OAPI_CODEGEN):
	@bash dev/clients/install-go.sh $(OAPI_CODEGEN_VERSION) $(@D)

$(OPENAPI_PYTHON_CLIENT):
	@bash dev/clients/install-python.sh $(OPENAPI_PYTHON_CLIENT_VERSION) $(patsubst %/bin/openapi-python-client,%,$@)

$(TS_CLIENT):
	@bash clients/typescript/install.sh

$(PYCLIENT):
	@bash clients/python/install.sh $(patsubst %/bin/python,%,$@)

clients: $(OAPI_CODEGEN) $(OPENAPI_PYTHON_CLIENT) $(TS_CLIENT) ## Regenerate the admin API's clients (Go, TypeScript, Python) from the document the binary serves.
	@mkdir -p .run/clients
	@go build -o .run/clients/sluice ./cmd/sluice
	@env -i PATH="$$PATH" HOME="$$HOME" .run/clients/sluice docs openapi > .run/clients/openapi.json
	@env -i PATH="$$PATH" HOME="$$HOME" .run/clients/sluice docs openapi --openapi-version 3.0 > .run/clients/openapi-3.0.json
	@$(CLIENT_TOOLS) bash dev/clients/generate.sh .run/clients/openapi.json .run/clients/openapi-3.0.json $(CURDIR)
	@cd clients/typescript && npx tsc -p .

# The console's browser tests (command/internal/operator/console): Debian's Chromium,
# installed when missing, and axe-core from npm, installed once per version
# from dev/console/axe's lockfile under .run/tools/ (a test tool only: the
# binary embeds nothing of it).
AXE_VERSION := $(shell sed -n 's/.*"axe-core": *"\([^"]*\)".*/\1/p' dev/console/axe/package.json)
AXE := .run/tools/axe-core-$(AXE_VERSION)/node_modules/axe-core/axe.min.js

$(AXE):
	@bash dev/console/axe/install.sh $(patsubst %/node_modules/axe-core/axe.min.js,%,$@)

chromium: ## Install Debian's Chromium for the console's browser tests when it is missing.
	@bash dev/console/chromium.sh

strace: ## Install strace when it is missing (make run's test records every connection its processes make).
	@command -v strace >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq strace >/dev/null; } || { echo "strace is missing and this is not root: apt-get install -y strace" >&2; exit 1; }

rabbitmq: ## Install Debian's rabbitmq-server when it is missing (the tests of RabbitMQ targets start nodes of their own with dev/rabbitmq/rabbitmq.sh).
	@test -x /usr/lib/rabbitmq/bin/rabbitmq-server || { [ "$$(id -u)" = 0 ] && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends rabbitmq-server >/dev/null; } || { echo "rabbitmq-server is missing and this is not root: apt-get install -y rabbitmq-server" >&2; exit 1; }

elasticmq: ## Resolve ElasticMQ (an SQS-compatible server) from Maven Central into .run/elasticmq/libs (the tests of SQS targets start servers of their own with dev/elasticmq/elasticmq.sh).
	@bash dev/elasticmq/elasticmq.sh install

console-screenshots: up chromium $(AXE) ## Write a PNG of every console page, with test data, to .run/console/, and refresh docs/console/'s where their page changed.
	@mkdir -p docs/console
	@$(WITH_ENV) SLUICE_CONSOLE_SCREENSHOTS=$(CURDIR)/.run/console SLUICE_CONSOLE_DOCS=$(CURDIR)/docs/console go test -count=1 -run '^TestEveryPageIsAccessible$$' ./command/internal/operator/console/
	@ls .run/console/*.png; git status --short docs/console

test: up monitoring-check $(SCHEMATHESIS) $(SQUAWK) $(PYORDERS) $(OAPI_CODEGEN) $(OPENAPI_PYTHON_CLIENT) $(TS_CLIENT) $(PYCLIENT) chromium strace rabbitmq elasticmq $(AXE) ## Run the monitoring check, gofmt and go vet, the quick chaos run, then every test (unit and integration, the admin API under Schemathesis, the migrations under squawk, the examples, the Python consumer under the kit) against the local services.
	@go vet ./...
	@unformatted="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$unformatted" ]; then echo "gofmt -w these files:"; echo "$$unformatted"; exit 1; fi
	@for m in . examples/orders examples/python-orders; do (cd $$m && go mod tidy -diff >/dev/null) || { echo "go.mod or go.sum of $$m is not tidy (a dependency the main module added reaches the examples through their replace): cd $$m && go mod tidy" >&2; exit 1; }; done
	@CHAOS_QUICK=1 bash dev/chaos.sh
	@$(WITH_ENV) SLUICE_SCHEMATHESIS=$(CURDIR)/$(SCHEMATHESIS) SLUICE_SQUAWK=$(CURDIR)/$(SQUAWK) \
		SLUICE_CLIENT_GENERATORS=1 $(CLIENT_TOOLS) SLUICE_TS_CLIENT=1 SLUICE_PY_CLIENT=$(CURDIR)/$(PYCLIENT) go test $(GO_TEST_FLAGS) ./...
	@$(WITH_ENV) SLUICE_E2E_ROLES=1 go test $(GO_TEST_FLAGS) -run '$(E2E_ROLES_FLOWS)' ./command/internal/cli/
	@$(WITH_ENV) cd examples/orders && go vet ./... && go test $(GO_TEST_FLAGS) ./...
	@$(WITH_ENV) cd examples/python-orders && go vet ./... && ORDERS_PYTHON=$(CURDIR)/$(PYORDERS) go test $(GO_TEST_FLAGS) ./...

# The end-to-end flows run again with every process its own least-privilege
# role over verify-full TLS (command/internal/cli/e2e_roles_test.go): a webhook to its
# grant, a refund, rewinds, a dead letter replayed.
E2E_ROLES_FLOWS := ^(TestPaidInvoiceGrantsCreditsOnce|TestRefundFollowsItsInvoiceAndReversesOnce|TestKillAndRewindsChangeNoEffect|TestPoisonInvoiceReachesTheDLQAndReplaysOnceAfterAFix)$$

test-unit: ## Run only the tests that need no services.
	@go test $(GO_TEST_FLAGS) ./internal/provider/signature/ ./internal/keyring/ ./schemas/
	@go test $(GO_TEST_FLAGS) -run 'TestWatermark|TestDecode|TestKeepalive' ./internal/cdc/

# promtool, built once from the Prometheus version dev/monitoring pins
# (without service discovery, which rule tests never use), kept under .run/.
PROMETHEUS_VERSION := $(shell awk '$$1 == "github.com/prometheus/prometheus" {print $$2}' dev/monitoring/go.mod)
PROMTOOL := .run/tools/promtool-$(PROMETHEUS_VERSION)
MONITORING_SCRAPE := $(CURDIR)/.run/monitoring/scrape.txt

$(PROMTOOL):
	@mkdir -p $(@D)
	@cd dev/monitoring && go build -tags remove_all_sd -o $(CURDIR)/$@ github.com/prometheus/prometheus/cmd/promtool

monitoring-check: up $(PROMTOOL) ## Unit-test the alert rules (promtool), then check the rules and the dashboard against a scrape of a running pipeline.
	@$(PROMTOOL) check rules cmd/sluice/monitoring/alerts.yml
	@$(PROMTOOL) test rules cmd/sluice/monitoring/alerts_test.yml
	@rm -f $(MONITORING_SCRAPE)
	@$(WITH_ENV) SLUICE_METRICS_SCRAPE=$(MONITORING_SCRAPE) go test $(GO_TEST_FLAGS) -run '^TestScrapeForTheMonitoringCheck$$' ./command/internal/cli
	@cd dev/monitoring && go vet ./... && SLUICE_METRICS_SCRAPE=$(MONITORING_SCRAPE) go test $(GO_TEST_FLAGS) ./...

bench: up build rabbitmq ## Measure the pipeline; the table lands in .run/bench/results.md (see docs/performance.md).
	@$(WITH_ENV) bash dev/bench.sh

bench-guard: up build ## A four-minute bench that fails on a cost regression far outside noise, or on plans made on a fresh database (CI runs it).
	@$(WITH_ENV) BENCH_QUICK=1 BENCH_ONLY=null,ingest,ladder,pgbench,fresh BENCH_GUARD=dev/bench/guard.json bash dev/bench.sh

bench-docs: ## Copy the latest full bench's table (.run/bench/results.md) into docs/performance.md.
	@bash dev/bench-docs.sh

docs: up ## Regenerate docs/configuration.md's flag tables from the CLI's own flags.
	@$(WITH_ENV) go test -count=1 -run '^TestConfigurationPageMatchesTheFlags$$' ./command/internal/cli -update-docs

chaos: rabbitmq ## Prove the invariants under kills, outages and hostile senders on a stack of its own (CHAOS_QUICK=1: short run; CHAOS_SEED=n: replay).
	@bash dev/chaos.sh

fmt: ## Format the code.
	@gofmt -w $$(git ls-files '*.go')
