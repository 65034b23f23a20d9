package signature

import (
	"errors"
	"net/http"
	"testing"
	"time"
)

// GitHub's published example (docs: "Validating webhook deliveries").
const (
	githubDocSecret = "It's a Secret to Everybody"
	githubDocBody   = "Hello, World!"
	githubDocSig    = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

func githubHeader(sig string) http.Header {
	h := http.Header{}
	h.Set(GitHubHeader, sig)
	return h
}

func TestGitHubAcceptsPublishedVector(t *testing.T) {
	t.Parallel()
	d := Delivery{Header: githubHeader(githubDocSig), Body: []byte(githubDocBody), Now: time.Now()}
	if _, err := (GitHub{}).Verify(d, [][]byte{[]byte("old secret"), []byte(githubDocSecret)}); err != nil {
		t.Fatalf("GitHub's own example refused: %v", err)
	}
	if got := SignGitHub(githubDocSecret, []byte(githubDocBody)); got != githubDocSig {
		t.Fatalf("SignGitHub = %s, GitHub publishes %s", got, githubDocSig)
	}
}

func TestGitHubRejections(t *testing.T) {
	t.Parallel()
	secrets := [][]byte{[]byte(githubDocSecret)}
	cases := map[string]struct {
		header string
		body   string
		want   error
	}{
		"no header":        {"", githubDocBody, ErrMissing},
		"sha1 header only": {"sha1=01", githubDocBody, ErrMissing},
		"not hex":          {"sha256=zz", githubDocBody, ErrMissing},
		"short digest":     {"sha256=7571", githubDocBody, ErrMissing},
		"body changed":     {githubDocSig, "Hello, World?", ErrMismatch},
		"wrong secret":     {SignGitHub("another", []byte(githubDocBody)), githubDocBody, ErrMismatch},
	}
	for name, tc := range cases {
		h := http.Header{}
		if tc.header != "" {
			h.Set(GitHubHeader, tc.header)
		}
		_, err := GitHub{}.Verify(Delivery{Header: h, Body: []byte(tc.body), Now: time.Now()}, secrets)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", name, err, tc.want)
		}
	}
}
