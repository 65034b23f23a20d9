package ingest

import (
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// hold is one request's share of the unverified-bytes budget; the zero
// value holds nothing and costs nothing.
type hold struct {
	budget *byteBudget
	key    string
	n      int64
}

// take adds n bytes to the hold, or refuses them.
func (h *hold) take(n int64) error {
	if h.budget == nil || n <= 0 {
		return nil
	}
	if err := h.budget.reserve(h.key, n); err != nil {
		return err
	}
	h.n += n
	return nil
}

// release gives every held byte back; safe to call more than once.
func (h *hold) release() {
	if h.budget != nil {
		h.budget.release(h.key, h.n)
		h.n = 0
	}
}

// chunkedStart is the first buffer of a body of unknown length; it doubles
// from there, each step taken from the budget before it is allocated.
const chunkedStart = 64 << 10

// readBody reads at most limit bytes, holding what it buffers against h:
// 413 from the announced length before reading anything, or as soon as the
// stream passes the limit; 429 or 503 as soon as the budget has no room for
// the next step. A declared length is taken whole up front, so a refused
// request costs no read at all.
func (s *Service) readBody(c *gin.Context, limit int64, h *hold) ([]byte, bool) {
	tooLarge := rejection{http.StatusRequestEntityTooLarge, "too_large", "body exceeds " + strconv.FormatInt(limit, 10) + " bytes"}
	declared := c.Request.ContentLength
	if declared > limit {
		s.reject(c, tooLarge, 0)
		return nil, false
	}
	r := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	size := declared
	if size < 0 {
		size = min(limit, chunkedStart)
	}
	if !s.holdBytes(c, h, size) {
		return nil, false
	}
	buf := make([]byte, 0, size)
	var err error
	if declared >= 0 {
		_, err = io.ReadFull(r, buf[:declared])
		buf = buf[:declared]
	} else {
		buf, err = s.readGrowing(c, r, buf, limit, h)
		if buf == nil && err == nil {
			return nil, false // refused by the budget, answered already
		}
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.reject(c, tooLarge, 0)
			return nil, false
		}
		s.reject(c, rejection{http.StatusBadRequest, "unreadable_body", "could not read body"}, 0, slog.Any("error", err))
		return nil, false
	}
	return buf, true
}

// readGrowing reads a body of unknown length, doubling buf as it fills.
// It returns (nil, nil) when the budget refused the next step.
func (s *Service) readGrowing(c *gin.Context, r io.Reader, buf []byte, limit int64, h *hold) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			grown := min(2*int64(cap(buf)), limit+1) // one past the limit lets MaxBytesReader say so
			if !s.holdBytes(c, h, grown-int64(cap(buf))) {
				return nil, nil
			}
			buf = append(make([]byte, 0, grown), buf...)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// holdBytes takes n more bytes for the request, or answers it: 429 when its
// source is at its bound, 503 when the process is. The connection closes
// after the answer: the rest of the body is never read.
func (s *Service) holdBytes(c *gin.Context, h *hold, n int64) bool {
	err := h.take(n)
	if err == nil {
		return true
	}
	c.Header("Connection", "close")
	r := rejection{http.StatusServiceUnavailable, "unverified_budget", "too many unverified bytes in flight, retry later"}
	if errors.Is(err, errBudgetSource) {
		r = rejection{http.StatusTooManyRequests, "unverified_source_budget", "too many unverified bytes in flight for this source, retry later"}
	}
	s.reject(c, r, time.Second)
	return false
}

// isJSON accepts application/json in any case, with or without parameters
// (media types are case-insensitive, RFC 9110 8.3.1).
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && strings.EqualFold(mt, "application/json")
}
