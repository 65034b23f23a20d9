package main

import (
	"io"
	"net/http"
)

// nullServer only drains the body and answers 202: the ceiling of what HTTP
// plus the generator's signing cost on this machine, against which every
// ingest figure is read.
func nullServer(addr string) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	})
	return http.ListenAndServe(addr, mux)
}
