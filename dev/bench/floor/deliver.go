package floor

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Deliver is the deliveries' floor: conns clients sending body to url for
// d, each request signed as Standard Webhooks asks (HMAC-SHA256 of
// "id.timestamp.body", base64, under a new id), and answered; it returns
// the requests answered 2xx. What a delivery must do beyond this (read the
// event, keep its outcome) the whole pipeline's rows already count.
func Deliver(ctx context.Context, url string, conns int, d time.Duration, body []byte) (int64, error) {
	key := []byte("ladder-floor-endpoint-key-32byte")
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var ok, seq atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				id := "msg_" + strconv.FormatInt(seq.Add(1), 10)
				status, err := signedPost(ctx, client, url, key, id, body)
				if ctx.Err() != nil {
					return
				}
				if err == nil && status/100 != 2 {
					err = fmt.Errorf("answered %d", status)
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if e, _ := failed.Load().(error); e != nil {
		return ok.Load(), e
	}
	return ok.Load(), nil
}

func signedPost(ctx context.Context, client *http.Client, url string, key []byte, id string, body []byte) (int, error) {
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", ts)
	req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
