package console

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/refusal"
)

func (c *Console) groupRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/consumer-groups", c.signedIn(c.groups))
	c.mux.HandleFunc("GET "+Prefix+"/consumer-groups/{group}", c.signedIn(c.group))
	c.mux.HandleFunc("POST "+Prefix+"/consumer-groups/{group}/rewind", c.signedIn(c.rewind))
}

func (c *Console) groups(w http.ResponseWriter, r *http.Request, s Session) error {
	var l list[operate.GroupLag]
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/consumer-groups", nil, nil, &l); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "groups", view{Title: "Consumer groups", Nav: "consumer-groups", Session: &s, Data: l.Items})
	return nil
}

// groupData is one group's page: its lag per partition and, after a dry
// run, what the rewind would move, with the form that executes it.
type groupData struct {
	Lag    operate.GroupLag
	Target rewindTarget
	Dry    *rewindOut
}

// Stopped reports whether the group has no members, so it may be rewound
// (Kafka's own reset refuses any other group, and so does the API).
func (d groupData) Stopped() bool {
	switch d.Lag.State {
	case "Empty", "Dead", "never ran":
		return true
	}
	return false
}

// rewindTarget is a rewind's form: one of to (earliest, latest), time or
// offset.
type rewindTarget struct {
	To, Time, Offset string
}

type rewindOut struct {
	Group  string               `json:"group"`
	DryRun bool                 `json:"dry_run"`
	Moves  []operate.RewindMove `json:"moves"`
	Reread int64
}

func (c *Console) group(w http.ResponseWriter, r *http.Request, s Session) error {
	return c.showGroup(w, r, s, http.StatusOK, groupData{})
}

func (c *Console) showGroup(w http.ResponseWriter, r *http.Request, s Session, status int, d groupData) error {
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/consumer-groups/"+url.PathEscape(r.PathValue("group")), nil, nil, &d.Lag); err != nil {
		return err
	}
	c.render(w, r, status, "group", view{Title: "Consumer group " + d.Lag.Group, Nav: "consumer-groups", Session: &s, Data: d})
	return nil
}

// rewind asks the API for the rewind the form names: a dry run, shown
// with the form that executes exactly it, unless the form says execute
// (it is only offered after a dry run).
func (c *Console) rewind(w http.ResponseWriter, r *http.Request, s Session) error {
	t := rewindTarget{To: r.PostFormValue("to"), Time: r.PostFormValue("time"), Offset: r.PostFormValue("offset")}
	execute := r.PostFormValue("execute") == "true"
	body := map[string]any{"dry_run": !execute}
	switch {
	case t.Time != "":
		body["time"] = apiTime(t.Time)
	case t.Offset != "":
		n, err := strconv.ParseInt(t.Offset, 10, 64)
		if err != nil {
			return refusal.InvalidField("offset", "a whole number, at least 0")
		}
		body["offset"] = n
	default:
		body["to"] = t.To
	}
	group := r.PathValue("group")
	var out rewindOut
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/consumer-groups/"+url.PathEscape(group)+"/rewind", nil, body, &out); err != nil {
		return err
	}
	if execute {
		redirect(w, r, "/consumer-groups/"+url.PathEscape(group), "rewound", nil)
		return nil
	}
	for _, m := range out.Moves {
		out.Reread += m.Reread
	}
	return c.showGroup(w, r, s, http.StatusOK, groupData{Target: t, Dry: &out})
}
