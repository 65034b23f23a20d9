package admin

import "github.com/danielgtaylor/huma/v2"

// PaginationExtension marks, on each list operation that pages, how it
// pages, so a client generator's wrapper can offer an iterator: send the
// page's NextField back as CursorParam until it is absent, reading each
// page's ItemsField. Every paged list names them alike (PageQuery,
// listOut); a list without it answers everything at once.
const PaginationExtension = "x-pagination"

// Pagination is the value of PaginationExtension.
type Pagination struct {
	CursorParam string `json:"cursor_param"`
	LimitParam  string `json:"limit_param"`
	NextField   string `json:"next_field"`
	ItemsField  string `json:"items_field"`
}

// pagination is how every paged list of this API pages.
var pagination = Pagination{CursorParam: "cursor", LimitParam: "limit", NextField: "next_cursor", ItemsField: "items"}

// statePagination marks every GET that takes the cursor parameter and
// answers a page with PaginationExtension.
func (a *API) statePagination() {
	reg := a.api.OpenAPI().Components.Schemas
	for _, item := range a.api.OpenAPI().Paths {
		op := item.Get
		if op == nil || !hasQueryParam(op, pagination.CursorParam) {
			continue
		}
		ok := op.Responses[statusOK]
		if ok == nil || ok.Content["application/json"] == nil {
			continue
		}
		page := deref(reg, ok.Content["application/json"].Schema)
		if page == nil || page.Properties[pagination.NextField] == nil || page.Properties[pagination.ItemsField] == nil {
			panic("admin: " + op.OperationID + " takes a cursor and answers no page") // a bug of this package
		}
		op.Extensions[PaginationExtension] = pagination
	}
}

const statusOK = "200"

func hasQueryParam(op *huma.Operation, name string) bool {
	for _, p := range op.Parameters {
		if p.In == "query" && p.Name == name {
			return true
		}
	}
	return false
}
