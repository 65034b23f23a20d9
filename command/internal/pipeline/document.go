package pipeline

import (
	"log/slog"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// AdminDocument is the OpenAPI document the admin listener of a process of
// cfg serves at admin.OpenAPIPath, built without connecting to anything:
// the clients are generated from it (`sluice docs openapi`). Its
// vocabularies are cfg's: the resource types are the configured ones,
// where a running deployment lists those its database settled.
func AdminDocument(cfg Config, log *slog.Logger) (*huma.OpenAPI, error) {
	a := &assembly{cfg: cfg.WithDefaults(), log: log, reg: prometheus.NewRegistry()}
	if err := a.vocabulary(); err != nil {
		return nil, err
	}
	srv := listen.NewAdmin("127.0.0.1:0", log, a.reg, nil)
	api, _, err := a.adminAPI(srv.Engine, tenancy.Store{Providers: a.cfg.IngestConfig.Providers})
	if err != nil {
		return nil, err
	}
	return api.OpenAPI(), nil
}
