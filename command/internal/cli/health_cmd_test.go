package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// listenerAt serves /readyz answering status on 127.0.0.1, and returns its
// port.
func listenerAt(t *testing.T, status int) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// `sluice health` asks where the process listens by the process's own
// settings: SLUICE_HTTP_ADDR (":port" asked on loopback), or with --admin
// SLUICE_ADMIN_ADDR; --url still wins.
func TestHealthAsksWhereTheProcessListens(t *testing.T) {
	t.Parallel()
	public, admin, down := listenerAt(t, http.StatusOK), listenerAt(t, http.StatusOK), listenerAt(t, http.StatusServiceUnavailable)
	for _, c := range []struct {
		env  []string
		args []string
		code int
	}{
		{[]string{"SLUICE_HTTP_ADDR=:" + public}, nil, 0},
		{[]string{"SLUICE_HTTP_ADDR=0.0.0.0:" + public}, nil, 0},
		{[]string{"SLUICE_HTTP_ADDR=127.0.0.1:" + down}, nil, 1},
		{[]string{"SLUICE_HTTP_ADDR=127.0.0.1:" + down, "SLUICE_ADMIN_ADDR=127.0.0.1:" + admin}, []string{"--admin"}, 0},
		{[]string{"SLUICE_HTTP_ADDR=127.0.0.1:" + down}, []string{"--url", "http://127.0.0.1:" + public + "/readyz"}, 0},
	} {
		env := append(sluiceEnv(suite.topics), c.env...)
		_, stderr, code := cliWith(t, env, append([]string{"health"}, c.args...)...)
		if code != c.code {
			t.Errorf("sluice health %v with %v: exit %d (%s), want %d", c.args, c.env, code, stderr, c.code)
		}
		if code == 1 && !strings.Contains(stderr, "127.0.0.1:"+down+"/readyz answered 503") {
			t.Errorf("sluice health with %v: %q, want the URL asked and its answer", c.env, stderr)
		}
	}
}
