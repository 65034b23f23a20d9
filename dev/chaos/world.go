package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/hmac"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/migrations"
)

// source is one webhook source the load signs for.
type source struct {
	id, tenant, kind, account, secret string
	hmac                              signature.HMAC // kind hmac only
}

// tenant holds one tenant's four sources and its mapped customers.
type tenant struct {
	id                            string
	stripe, github, standard, mac *source
	customers                     []string
}

// hmacSettings is the generic kind's configuration used for every hmac
// source: a signed timestamp, the id and type read from the body.
var hmacSettings = hmac.Settings{
	HMACConfig: signature.HMACConfig{Header: "X-Chaos-Signature", Prefix: "sha256=", TimestampHeader: "X-Chaos-Timestamp"},
	EventID:    "/id", EventType: "/type",
}

// freshDatabase drops and recreates dbName on the chaos server, migrates it
// (migrate; nil: this build's migrations), and returns its URL and a pool.
func freshDatabase(ctx context.Context, adminURL, dbName string, migrate func(ctx context.Context, url string) error) (string, *pgxpool.Pool, error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect %s: %w", adminURL, err)
	}
	defer admin.Close(ctx)
	_, _ = admin.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, dbName)
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{dbName}.Sanitize()+" WITH (FORCE)"); err != nil {
		return "", nil, fmt.Errorf("drop %s: %w", dbName, err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{dbName}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create %s: %w", dbName, err)
	}
	u, err := url.Parse(adminURL)
	if err != nil {
		return "", nil, fmt.Errorf("database url: %w", err)
	}
	u.Path = "/" + dbName
	pool, err := pg.Connect(ctx, u.String(), 8)
	if err != nil {
		return "", nil, fmt.Errorf("connect %s: %w", dbName, err)
	}
	if migrate == nil {
		err = pg.Migrate(ctx, pool, migrations.FS, slog.New(slog.DiscardHandler))
	} else {
		err = migrate(ctx, u.String())
	}
	if err != nil {
		pool.Close()
		return "", nil, fmt.Errorf("migrate: %w", err)
	}
	return u.String(), pool, nil
}

// createTenants makes n tenants, each with one source of every kind and
// customers mapped to workspaces. Secrets derive from the seed, so a run
// replays byte for byte.
func createTenants(ctx context.Context, pool *pgxpool.Pool, secretKey string, n, customers int, seed uint64) ([]*tenant, error) {
	ring, err := keyring.Parse(secretKey)
	if err != nil {
		return nil, fmt.Errorf("key ring: %w", err)
	}
	store := tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
	settings, _ := json.Marshal(hmacSettings)
	signer, err := signature.NewHMAC(hmacSettings.HMACConfig, 0)
	if err != nil {
		return nil, fmt.Errorf("hmac signer: %w", err)
	}
	var out []*tenant
	for i := range n {
		t := &tenant{}
		if t.id, err = store.CreateTenant(ctx, fmt.Sprintf("chaos-%d", i)); err != nil {
			return nil, fmt.Errorf("tenant: %w", err)
		}
		mk := func(kind, secret string, settings []byte) (*source, error) {
			s := &source{tenant: t.id, kind: kind, account: fmt.Sprintf("%s_chaos_%d", kind, i), secret: secret, hmac: signer}
			id, err := store.CreateSource(ctx, tenancy.NewSource{TenantID: t.id, Kind: kind, Account: s.account, Secret: secret, Settings: settings})
			if err != nil {
				return nil, fmt.Errorf("%s source: %w", kind, err)
			}
			s.id = id
			return s, nil
		}
		std := "whsec_" + base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "chaos-standard-%d-%024d", i, seed))
		if t.stripe, err = mk("stripe", fmt.Sprintf("whsec_chaos_%d_%d", i, seed), nil); err != nil {
			return nil, err
		}
		if t.github, err = mk("github", fmt.Sprintf("gh_chaos_%d_%d", i, seed), nil); err != nil {
			return nil, err
		}
		if t.standard, err = mk("standard_webhooks", std, nil); err != nil {
			return nil, err
		}
		if t.mac, err = mk("hmac", fmt.Sprintf("mac_chaos_%d_%d", i, seed), settings); err != nil {
			return nil, err
		}
		for c := range customers {
			cust := fmt.Sprintf("cus_chaos_%d_%d", i, c)
			if _, err := store.CreateWorkspace(ctx, t.id, cust, ""); err != nil {
				return nil, fmt.Errorf("workspace: %w", err)
			}
			t.customers = append(t.customers, cust)
		}
		out = append(out, t)
	}
	return out, nil
}
