package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v88/github"

	"github.com/sluicehq/sluice/internal/provider"
)

// Credentials are a GitHub App source's API credentials, as stored
// (sealed) with the source: the App's id and private key, which sign the
// short-lived JWTs the App's own endpoints (its hook deliveries) take.
type Credentials struct {
	AppID      int64  `json:"app_id"`
	PrivateKey string `json:"private_key"` // PEM
	// APIBase replaces https://api.github.com/: GitHub Enterprise Server
	// (https://HOST/api/v3/), or a test server.
	APIBase string `json:"api_base,omitempty"`
}

// Base is where the API is.
func (c *Credentials) Base() string { return c.APIBase }

// Check refuses an App id or a private key GitHub would refuse.
func (c *Credentials) Check() error {
	if c.AppID <= 0 {
		return errors.New("github API credentials: app_id must be the App's numeric id")
	}
	// The key is parsed now, so a bad one is refused before it is stored;
	// the error never quotes it.
	if _, err := ghinstallation.NewAppsTransport(http.DefaultTransport, c.AppID, []byte(c.PrivateKey)); err != nil {
		return errors.New("github API credentials: private_key is not the App's PEM RSA private key")
	}
	return nil
}

// credentialsExample is the document the refusal of one that is not
// shows.
const credentialsExample = `{"app_id":123,"private_key":"-----BEGIN RSA PRIVATE KEY-----..."}`

// CheckAPICredentials refuses credentials that could not call GitHub as
// the App.
func (Provider) CheckAPICredentials(raw []byte) error {
	_, err := provider.ReadCredentials[Credentials](Kind, raw, credentialsExample)
	return err
}

// OpenAPI returns a client of GitHub's REST API (google/go-github)
// authenticated as the App with JWTs minted by ghinstallation.
func (Provider) OpenAPI(raw []byte, client *http.Client) (provider.API, error) {
	c, err := provider.ReadCredentials[Credentials](Kind, raw, credentialsExample)
	if err != nil {
		return nil, err
	}
	next := client.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	jwt, err := ghinstallation.NewAppsTransport(next, c.AppID, []byte(c.PrivateKey))
	if err != nil {
		return nil, errors.New("github API credentials: private_key is not the App's PEM RSA private key")
	}
	withJWT := *client
	withJWT.Transport = jwt
	opts := []gh.ClientOptionsFunc{gh.WithHTTPClient(&withJWT)}
	if c.APIBase != "" {
		base := strings.TrimRight(c.APIBase, "/") + "/"
		opts = append(opts, gh.WithURLs(&base, &base))
	}
	cl, err := gh.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("github client: %w", err)
	}
	return api{client: cl}, nil
}

// api is GitHub's API for an App. GitHub keeps an App's hook deliveries
// for 3 days (7 on Enterprise Server) and redelivers one on request with
// the same X-GitHub-Delivery; it lists no events. An installation's state
// can be fetched, which decides ties.
type api struct {
	client *gh.Client
}

func (api) Events(context.Context, provider.Window, string, func(provider.Page) error) error {
	return provider.ErrNotOffered
}

// State fetches an installation (GET /app/installations/{id}) and enters
// it as the installation event its state stands for (suspend or
// unsuspend), versioned by its updated_at, under a delivery id derived
// from the installation, state and version. Accepted after the webhooks
// it stands beside, it decides a tie of equal updated_at between them:
// GitHub's state, not the order deliveries came in, has the last word.
func (a api) State(ctx context.Context, objectID string) (provider.Found, error) {
	id, err := strconv.ParseInt(objectID, 10, 64)
	if err != nil {
		return provider.Found{}, fmt.Errorf("github installation id %q: %w", objectID, err)
	}
	inst, _, err := a.client.Apps.GetInstallation(ctx, id)
	if err != nil {
		return provider.Found{}, fmt.Errorf("get github installation %d: %w", id, err)
	}
	action := "unsuspend"
	if inst.SuspendedAt != nil {
		action = "suspend"
	}
	updated := inst.GetUpdatedAt().UTC().Format(time.RFC3339)
	acct := inst.GetAccount()
	body, err := json.Marshal(map[string]any{
		"action": action,
		"installation": map[string]any{"id": id, "updated_at": updated, "suspended_at": inst.SuspendedAt,
			"account": map[string]any{"id": acct.GetID(), "login": acct.GetLogin(), "type": acct.GetType()}},
		"sender": map[string]any{"login": "sluice-reconcile"},
	})
	if err != nil {
		return provider.Found{}, err
	}
	sum := sha256.Sum256([]byte(objectID + "\x00" + action + "\x00" + updated))
	h := http.Header{}
	h.Set("X-GitHub-Event", "installation")
	h.Set("X-GitHub-Delivery", "sluice-reconcile-"+hex.EncodeToString(sum[:16]))
	return provider.Found{Header: h, Body: body}, nil
}

// Redeliver pages through the App's deliveries, newest first, down to
// w.Since, 100 to a page from cursor (GitHub's own), and asks for a
// redelivery of each delivery (GUID) delivered in the window that never
// succeeded, page by page. A GUID one attempt of which succeeded is
// settled, whatever its other attempts; since attempts are listed newest
// first, a GUID is judged by the attempts listed up to its page (a walk
// resumed after a stop remembers none): a redelivery of one whose older
// attempt succeeded reaches ingest as a duplicate, and costs one request.
func (a api) Redeliver(ctx context.Context, w provider.Window, cursor string, page func(provider.Page) error) error {
	settled := map[string]bool{} // GUID: succeeded, or asked for
	opts := &gh.ListCursorOptions{PerPage: 100, Cursor: cursor}
	for {
		list, resp, err := a.client.Apps.ListHookDeliveries(ctx, opts)
		if err != nil {
			return fmt.Errorf("list github app hook deliveries: %w", err)
		}
		p, failed, older := judge(list, w, settled)
		for _, d := range failed {
			guid := d.GetGUID()
			settled[guid] = true
			if !w.DryRun {
				_, _, err := a.client.Apps.RedeliverHookDelivery(ctx, d.GetID())
				var accepted *gh.AcceptedError
				if err != nil && !errors.As(err, &accepted) {
					// What was asked on this page is reported with the error.
					p.Cursor = cursor
					return errors.Join(fmt.Errorf("redeliver github delivery %s: %w", guid, err), page(p))
				}
			}
			p.Asked = append(p.Asked, guid)
		}
		p.Cursor, p.Done = resp.Cursor, older || resp.Cursor == "" || len(list) == 0
		if err := page(p); err != nil {
			return err
		}
		if p.Done {
			return nil
		}
		cursor, opts.Cursor = resp.Cursor, resp.Cursor
	}
}

// judge reads one page of deliveries, newest first: the newest failed
// attempt of each GUID delivered in the window and not settled (succeeded
// on this page or an earlier one, or asked for already), and whether the
// page reached back past the window's start.
func judge(list []*gh.HookDelivery, w provider.Window, settled map[string]bool) (p provider.Page, failed []*gh.HookDelivery, older bool) {
	p.Listed = len(list)
	seen := map[string]bool{}
	var candidates []*gh.HookDelivery
	for _, d := range list {
		at := d.GetDeliveredAt().Time
		if at.Before(w.Since) {
			older = true
			break
		}
		p.Reached = at
		if !w.Until.IsZero() && !at.Before(w.Until) {
			continue
		}
		guid := d.GetGUID()
		if code := d.GetStatusCode(); code >= 200 && code < 300 {
			settled[guid] = true
			continue
		}
		if !seen[guid] {
			seen[guid] = true
			candidates = append(candidates, d)
		}
	}
	for _, d := range candidates {
		if !settled[d.GetGUID()] {
			failed = append(failed, d)
		}
	}
	return p, failed, older
}
