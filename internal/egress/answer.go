package egress

import (
	"fmt"
	"io"
)

// drainLimit is how much of an answer past what the caller keeps
// ReadAnswer reads and throws away, so that the connection can carry the
// next request. An answer longer than that is cheaper to end by closing the
// connection than to read.
const drainLimit = 64 << 10

// ReadAnswer returns at most the first keep bytes of an endpoint's answer,
// then drains up to drainLimit more so the connection can be reused. It
// never reads more than keep+drainLimit bytes, however much the endpoint
// sends; the caller still closes the body. An error reading the kept bytes
// is returned with what was read; an error while draining is not, since
// the answer is complete and the transport will not reuse that connection.
func ReadAnswer(r io.Reader, keep int) ([]byte, error) {
	keep = max(keep, 0)
	b, err := io.ReadAll(io.LimitReader(r, int64(keep)))
	if err != nil {
		return b, fmt.Errorf("egress: read answer: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r, drainLimit))
	return b, nil
}
