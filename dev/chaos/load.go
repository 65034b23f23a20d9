package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// sender sends deliveries like a provider: a legitimate one is retried with
// backoff until it is answered 2xx (a 5xx, 429 or a refused connection while
// ingest restarts is the provider's cue to retry); a hostile one is sent once.
type sender struct {
	ingestURLs []string // every ingest instance; attempts go round them, as through a load balancer
	next       atomic.Uint64
	client     *http.Client
	giveUp     time.Duration

	mu        sync.Mutex
	statuses  map[int]int            // every answer, by status
	accepted  map[string]bool        // event keys answered 2xx
	hostile   map[string]map[int]int // hostile kind -> status -> count
	unserved  []string               // legitimate deliveries never answered 2xx
	hostileOK []string               // hostile deliveries answered 2xx

	// What providers saw of an upgrade (upgrade mode): during is set while
	// it runs.
	during  atomic.Bool
	refusal refusals
}

// refusals is what the sender met of the upgrade: answers that told it to
// come back while the upgrade ran (a 5xx, no answer), and how long the
// longest wait for a 2xx after one lasted.
type refusals struct {
	sent           int         // legitimate deliveries sent, first attempts
	acceptedDuring int         // of them, answered 2xx while the upgrade ran
	answers        map[int]int // refusals during the upgrade by status (0: no answer)
	retried        int         // deliveries refused during the upgrade, then accepted
	longest        time.Duration
}

func newSender(ingestURLs []string, conns int) *sender {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 3 * time.Second}).DialContext}
	return &sender{ingestURLs: ingestURLs, client: &http.Client{Transport: tr, Timeout: 15 * time.Second}, giveUp: 2 * time.Minute,
		statuses: map[int]int{}, accepted: map[string]bool{}, hostile: map[string]map[int]int{}, refusal: refusals{answers: map[int]int{}}}
}

func eventKey(src *source, eventID string) string { return src.id + "/" + src.account + "/" + eventID }

// run sends ds with conns workers at about rate deliveries per second.
func (s *sender) run(ctx context.Context, ds []*delivery, conns int, rate float64) {
	due := make(chan *delivery)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range due {
				s.deliver(ctx, d)
			}
		}()
	}
	interval := time.Duration(float64(time.Second) / rate)
	next := time.Now()
	for _, d := range ds {
		if w := time.Until(next); w > 0 {
			select {
			case <-time.After(w):
			case <-ctx.Done():
			}
		}
		next = next.Add(interval)
		select {
		case due <- d:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(due)
	wg.Wait()
}

// deliver sends d until it is answered 2xx (legitimate) or once (hostile);
// it reports whether d was answered 2xx.
func (s *sender) deliver(ctx context.Context, d *delivery) bool {
	deadline := time.Now().Add(s.giveUp)
	pause := 100 * time.Millisecond
	var refused time.Time // the first refusal, if any
	if d.hostile == "" {
		s.mu.Lock()
		s.refusal.sent++
		s.mu.Unlock()
	}
	for {
		status, err := s.send(ctx, d)
		if err != nil {
			status = 0
		}
		if d.hostile != "" {
			return s.hostileAnswer(d, status)
		}
		s.mu.Lock()
		s.statuses[status]++
		if status/100 == 2 {
			s.accepted[eventKey(d.src, d.eventID)] = true
			s.acceptedAfter(refused)
			s.mu.Unlock()
			return true
		}
		if status/100 == 4 && status != http.StatusTooManyRequests {
			// A legitimate delivery refused for good is a bug to report,
			// not to retry.
			s.unserved = append(s.unserved, fmt.Sprintf("%s: %d", d.eventID, status))
			s.mu.Unlock()
			return false
		}
		if s.during.Load() {
			s.refusal.answers[status]++
			if refused.IsZero() {
				refused = time.Now()
			}
		}
		s.mu.Unlock()
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.mu.Lock()
			s.unserved = append(s.unserved, fmt.Sprintf("%s: no 2xx in %s (last %d, %v)", d.eventID, s.giveUp, status, err))
			s.mu.Unlock()
			return false
		}
		select {
		case <-time.After(pause):
		case <-ctx.Done():
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// acceptedAfter counts a 2xx; refused is when the delivery was first
// refused (zero: never). s.mu is held.
func (s *sender) acceptedAfter(refused time.Time) {
	if s.during.Load() {
		s.refusal.acceptedDuring++
	}
	if !refused.IsZero() {
		s.refusal.retried++
		s.refusal.longest = max(s.refusal.longest, time.Since(refused))
	}
}

// hostileAnswer records the one answer to a hostile request.
func (s *sender) hostileAnswer(d *delivery, status int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statuses[status]++
	if s.hostile[d.hostile] == nil {
		s.hostile[d.hostile] = map[int]int{}
	}
	s.hostile[d.hostile][status]++
	if status/100 == 2 {
		s.hostileOK = append(s.hostileOK, fmt.Sprintf("%s %s: %d", d.hostile, d.eventID, status))
	}
	return status/100 == 2
}

func (s *sender) send(ctx context.Context, d *delivery) (int, error) {
	url := d.url
	if url == "" {
		url = s.ingestURLs[s.next.Add(1)%uint64(len(s.ingestURLs))] + "/v1/ingest/" + d.src.id
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return 0, err
	}
	for k, v := range d.sign(time.Now()) {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
