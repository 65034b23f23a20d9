package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/dev/bench/floor"
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

// runFloor runs one of the ladder's floors as a process of its own, so the
// bench reads its CPU apart: ingest-floor <addr> <database url> <topic>
// <batch> <sources.json>, relay-floor <brokers> <topic suffix> (reading
// pg_recvlogical's output on stdin), or deliver-floor <url> <conns>
// <duration> <body bytes> (printing the requests answered).
func runFloor(name string, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	// The collector as Sluice's processes run it (--gc-percent's default):
	// a floor pays for its work, not for another heap setting.
	debug.SetGCPercent(400)
	// BENCH_PROFILE=1 profiles the floors too (the bench sets the path).
	if path := os.Getenv("BENCH_FLOOR_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	switch {
	case name == "ingest-floor" && len(args) == 5:
		batch, err := strconv.Atoi(args[3])
		if err != nil {
			return fmt.Errorf("batch: %w", err)
		}
		raw, err := os.ReadFile(args[4])
		if err != nil {
			return err
		}
		cfg := floor.IngestConfig{Addr: args[0], DatabaseURL: args[1], Topic: args[2], Batch: batch}
		if err := json.Unmarshal(raw, &cfg.Sources); err != nil {
			return fmt.Errorf("%s: %w", args[4], err)
		}
		return floor.Ingest(ctx, cfg)
	case name == "deliver-floor" && len(args) == 4:
		conns, err1 := strconv.Atoi(args[1])
		d, err2 := time.ParseDuration(args[2])
		size, err3 := strconv.Atoi(args[3])
		if err := errors.Join(err1, err2, err3); err != nil {
			return err
		}
		body := []byte(`{"type":"stripe.invoice.paid","data":"` + strings.Repeat("x", max(0, size-40)) + `"}`)
		n, err := floor.Deliver(ctx, args[0], conns, d, body)
		fmt.Printf("%d\n", n)
		return err
	case name == "relay-floor" && len(args) == 2:
		n, err := floor.Relay(ctx, os.Stdin, floor.RelayConfig{Brokers: strings.Split(args[0], ","), TopicSuffix: args[1]})
		fmt.Printf("%d records acknowledged\n", n)
		return err
	}
	return fmt.Errorf("usage: %s: unknown floor or arguments %q", name, args)
}
