package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/refusal"
)

func (c *Console) deadLetterRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/dead-letters", c.signedIn(c.deadLetters))
	c.mux.HandleFunc("GET "+Prefix+"/dead-letters/replay", c.signedIn(c.confirmReplaySet))
	c.mux.HandleFunc("POST "+Prefix+"/dead-letters/replay", c.signedIn(c.replaySet))
	c.mux.HandleFunc("GET "+Prefix+"/dead-letters/{id}/replay", c.signedIn(c.confirmReplay))
	c.mux.HandleFunc("POST "+Prefix+"/dead-letters/{id}/replay", c.signedIn(c.replay))
	c.mux.HandleFunc("GET "+Prefix+"/conflicts", c.signedIn(c.conflicts))
	c.mux.HandleFunc("GET "+Prefix+"/conflicts/{id}", c.signedIn(c.conflict))
	c.mux.HandleFunc("POST "+Prefix+"/conflicts/{id}/decide", c.signedIn(c.decideConflict))
}

// The filters of the list, and those of a filtered replay (the pending
// letters only, no paging).
var (
	deadLetterFilters = []string{"group", "tenant_id", "reason", "since", "until", "replayed", "cursor", "limit"}
	replayFilters     = []string{"group", "tenant_id", "reason", "since", "until"}
)

func (c *Console) deadLetters(w http.ResponseWriter, r *http.Request, s Session) error {
	q := filters(r, deadLetterFilters...)
	var l list[operate.DeadLetter]
	refusal, err := refused(c.call(r.Context(), r, s.Token, http.MethodGet, "/dead-letters", q, nil, &l))
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "dead-letters", view{Title: "Dead letters", Nav: "dead-letters", Session: &s, Error: refusal, Data: newListPage(l, q)})
	return nil
}

// replayConfirm is the page before a replay: what it would replay (the
// dry run's count) and the form that does it.
type replayConfirm struct {
	Action  string
	Count   int64
	Letter  *operate.DeadLetter
	Filters url.Values
	// NoFilter: the link named no filter, and a replay of every letter at
	// once is never offered.
	NoFilter bool
}

func (c *Console) confirmReplaySet(w http.ResponseWriter, r *http.Request, s Session) error {
	q := filters(r, replayFilters...)
	if len(q) == 0 {
		c.render(w, r, http.StatusOK, "replay", view{Title: "Replay dead letters", Nav: "dead-letters", Session: &s,
			Data: replayConfirm{NoFilter: true}})
		return nil
	}
	// The form replays what was counted: letters that fail after the count
	// are not in it, so an open window is closed at the moment of counting.
	if q.Get("until") == "" {
		q.Set("until", time.Now().UTC().Format(time.RFC3339Nano))
	}
	var n struct {
		Pending int64 `json:"pending"`
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/dead-letters/count", q, nil, &n); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "replay", view{Title: "Replay dead letters", Nav: "dead-letters", Session: &s,
		Data: replayConfirm{Action: Prefix + "/dead-letters/replay", Count: n.Pending, Filters: q}})
	return nil
}

func (c *Console) replaySet(w http.ResponseWriter, r *http.Request, s Session) error {
	body := map[string]string{}
	for _, f := range replayFilters {
		if v := r.PostFormValue(f); v != "" {
			if f == "since" || f == "until" {
				v = apiTime(v)
			}
			body[f] = v
		}
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/dead-letters/replay", nil, body, nil); err != nil {
		return err
	}
	redirect(w, r, "/dead-letters", "replayed-set", nil)
	return nil
}

func (c *Console) confirmReplay(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || n <= 0 {
		return refusal.NoSuch("dead letter", id)
	}
	// The letter without its record (reading one is audited and not
	// needed to decide).
	var letter operate.DeadLetter
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/dead-letters/"+strconv.FormatInt(n, 10)+"/summary", nil, nil, &letter); err != nil {
		return err
	}
	d := replayConfirm{Action: Prefix + "/dead-letters/" + id + "/replay", Letter: &letter}
	if d.Letter.ReplayedAt == nil {
		d.Count = 1
	}
	c.render(w, r, http.StatusOK, "replay", view{Title: "Replay dead letter " + id, Nav: "dead-letters", Session: &s, Data: d})
	return nil
}

func (c *Console) replay(w http.ResponseWriter, r *http.Request, s Session) error {
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/dead-letters/"+url.PathEscape(r.PathValue("id"))+"/replay", nil, struct{}{}, nil); err != nil {
		return err
	}
	redirect(w, r, "/dead-letters", "replayed", nil)
	return nil
}

func (c *Console) conflicts(w http.ResponseWriter, r *http.Request, s Session) error {
	q := filters(r, "tenant_id", "state", "since", "until", "cursor", "limit")
	var l list[operate.Conflict]
	refusal, err := refused(c.call(r.Context(), r, s.Token, http.MethodGet, "/conflicts", q, nil, &l))
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "conflicts", view{Title: "Conflicts", Nav: "conflicts", Session: &s, Error: refusal, Data: newListPage(l, q)})
	return nil
}

// conflictData is a conflict's two bodies side by side, line by line,
// the lines that differ marked.
type conflictData struct {
	operate.Conflict
	Lines []diffLine
}

func (c *Console) conflict(w http.ResponseWriter, r *http.Request, s Session) error {
	var d operate.ConflictDetail
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/conflicts/"+url.PathEscape(r.PathValue("id")), nil, nil, &d); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "conflict", view{Title: "Conflict on event " + d.EventID, Nav: "conflicts", Session: &s,
		Data: conflictData{Conflict: d.Conflict, Lines: sideBySide(bodyText(d.Original.Body), bodyText(d.Newcomer.Body))}})
	return nil
}

// decideConflict records the form's decision through the API (audited
// there) and goes back to the conflict.
func (c *Console) decideConflict(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	body := map[string]string{"outcome": r.PostFormValue("outcome"), "note": strings.TrimSpace(r.PostFormValue("note"))}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/conflicts/"+url.PathEscape(id)+"/decide", nil, body, nil); err != nil {
		return err
	}
	redirect(w, r, "/conflicts/"+url.PathEscape(id), "conflict-"+body["outcome"], nil)
	return nil
}
