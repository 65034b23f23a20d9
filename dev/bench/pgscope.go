package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/dev/procfs"
)

// pgScope reads the CPU of the Postgres backends serving one database (its
// sessions and walsenders, by their process titles) instead of the whole
// server's: on a machine where other tests use the same server (the
// development machine, shared), the server's CPU counts theirs too. It
// samples every 50 ms, so a backend that exits in a window counts up to its
// last sample; the shared writer processes (WAL writer, checkpointer,
// background writer) are left out, since every database drives them.
type pgScope struct {
	postmaster int
	db, match  string
	// admin asks, on another database, which database a new walsender
	// streams from (its title does not say); senders caches the answers.
	admin   *pgx.Conn
	senders map[int]bool

	mu    sync.Mutex
	first map[int]time.Duration // each backend's CPU when first seen
	last  map[int]time.Duration
	gone  time.Duration // of processes whose pid was reused
	stop  chan struct{}
	done  chan struct{}
}

func newPGScope(ctx context.Context, postmaster int, adminURL, db string) (*pgScope, error) {
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return nil, err
	}
	s := &pgScope{postmaster: postmaster, db: db, match: " " + db + " ", admin: admin, senders: map[int]bool{},
		first: map[int]time.Duration{}, last: map[int]time.Duration{}, stop: make(chan struct{}), done: make(chan struct{})}
	s.poll()
	go func() {
		defer close(s.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.poll()
			}
		}
	}()
	return s, nil
}

// poll reads every backend of the database.
func (s *pgScope) poll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pid := range procfs.Children(s.postmaster) {
		raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		title := strings.ReplaceAll(string(raw), "\x00", " ") + " "
		if err != nil || !strings.Contains(title, s.match) && !s.sender(pid, title) {
			continue
		}
		used := procfs.CPU(pid, false)
		prev, seen := s.last[pid]
		switch {
		case !seen: // counted from here
			s.first[pid] = used
		case used < prev: // a new process under a reused pid
			s.gone += prev - s.first[pid]
			s.first[pid] = 0
		}
		s.last[pid] = used
	}
}

// sender says whether pid is a walsender streaming from the database.
func (s *pgScope) sender(pid int, title string) bool {
	if !strings.HasPrefix(title, "postgres: walsender ") {
		return false
	}
	ours, known := s.senders[pid]
	if !known {
		var n int
		_ = s.admin.QueryRow(context.Background(), `SELECT count(*) FROM pg_replication_slots WHERE active_pid = $1 AND database = $2`, pid, s.db).Scan(&n)
		ours = n > 0
		// A walsender not streaming yet is asked again next time.
		if ours || strings.Contains(title, "START_REPLICATION") {
			s.senders[pid] = ours
		}
	}
	return ours
}

// used is the CPU the database's backends spent since the scope began.
func (s *pgScope) used() time.Duration {
	s.poll()
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.gone
	for pid, last := range s.last {
		d += last - s.first[pid]
	}
	return d
}

func (s *pgScope) close() {
	close(s.stop)
	<-s.done
	_ = s.admin.Close(context.Background())
}
