package admin

import (
	"log/slog"
	"net/http"
	"regexp"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
)

// RequestIDHeader names every answer of the admin listener's API: the one
// the request carried when well-formed (a proxy's, a client's trace), or a
// new uuid. The same id is in the answer's problem detail (request_id) and
// in the process's log line of the request.
const RequestIDHeader = "X-Request-Id"

// requestIDKey is where the request's id is kept on its gin context.
const requestIDKey = "sluice.request_id"

// requestIDs are the ids a request may bring: short, and nothing a log
// line or a terminal would read as more than text.
var requestIDs = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// answerConventions is the first handler of every API route and of the
// unrouted answers: it names the request (X-Request-Id), forbids caches
// from keeping any answer (Cache-Control: no-store: answers hold tenants'
// data, some a secret shown once), and logs one line per request once it
// is answered.
func (a *API) answerConventions(c *gin.Context) {
	id := c.GetHeader(RequestIDHeader)
	if !requestIDs.MatchString(id) {
		id = uuid.NewString()
	}
	c.Set(requestIDKey, id)
	c.Header(RequestIDHeader, id)
	c.Header("Cache-Control", "no-store")
	start := time.Now()
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "(unrouted)"
	}
	level := slog.LevelInfo
	if c.Writer.Status() >= http.StatusInternalServerError {
		level = slog.LevelWarn
	}
	a.log.Log(c.Request.Context(), level, "admin request", slog.String("request_id", id), slog.String("method", c.Request.Method),
		slog.String("route", route), slog.Int("status", c.Writer.Status()), slog.Duration("took", time.Since(start)))
}

// requestID is the id of the request hc answers.
func requestID(hc huma.Context) string { return humagin.Unwrap(hc).GetString(requestIDKey) }
