package admin

import (
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"
	"github.com/gin-gonic/gin"
)

// ginAdapter registers huma's operations on the admin listener's engine,
// as humagin's own adapter does, and answers HEAD wherever an operation
// answers GET (RFC 9110, 9.3.2): the GET's handler runs, as a GET (a read
// token may send it, and payload reads are audited alike), and net/http
// sends its status and headers without the body. HEAD is not in the
// document: OpenAPI clients have no use for it, and it is the GET's.
type ginAdapter struct{ *gin.Engine }

func (g ginAdapter) Handle(op *huma.Operation, handler func(huma.Context)) {
	path := strings.NewReplacer("{", ":", "}", "").Replace(op.Path)
	serve := func(c *gin.Context) { handler(humagin.NewContext(op, c)) }
	g.Engine.Handle(op.Method, path, serve)
	if op.Method == http.MethodGet {
		g.Engine.Handle(http.MethodHead, path, serve)
	}
}
