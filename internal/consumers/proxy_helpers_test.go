package consumers_test

import (
	"net/url"
	"testing"
)

func pgHost(t *testing.T, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func viaProxy(t *testing.T, dbURL, addr string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}
