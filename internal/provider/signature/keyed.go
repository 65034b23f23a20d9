package signature

import (
	"crypto/hmac"
	"crypto/subtle"
	"hash"
	"sync"
)

// maxKeyed bounds the secrets one verifier keeps keyed states for: a
// source has one, two while a secret is rolled; a verifier met with more
// (one shared by many sources) computes the rest as before.
const maxKeyed = 8

// keyedMACs keeps, for each secret a verifier has met, HMAC states keyed
// with it, so a delivery's MAC starts from the keyed state instead of
// building the key's pads and hashing them again (crypto/hmac's Reset
// restores the keyed state). A verifier is opened per source and dropped
// with it, so a rotated-out secret's states go with the source's cache
// entry. nil computes every MAC from the key.
type keyedMACs struct {
	newHash func() hash.Hash
	mu      sync.RWMutex
	keys    []*keyed
}

// keyed is one secret (a copy) and its pool of states keyed with it.
type keyed struct {
	secret []byte
	pool   sync.Pool
}

func newKeyedMACs(newHash func() hash.Hash) *keyedMACs { return &keyedMACs{newHash: newHash} }

// mac returns a state keyed with secret and the entry to give it back to
// once its sum was taken (nil: a state of its own). newHash is the
// scheme's hash, for a nil m.
func (m *keyedMACs) mac(newHash func() hash.Hash, secret []byte) (hash.Hash, *keyed) {
	if m == nil {
		return hmac.New(newHash, secret), nil
	}
	k := m.find(secret)
	if k == nil {
		return hmac.New(m.newHash, secret), nil
	}
	if h, ok := k.pool.Get().(hash.Hash); ok {
		return h, k
	}
	return hmac.New(m.newHash, k.secret), k
}

// release resets a state to its keyed start and keeps it; a nil k has
// nothing to keep.
func (k *keyed) release(h hash.Hash) {
	if k == nil {
		return
	}
	h.Reset()
	k.pool.Put(h)
}

// find is the entry of secret, added when there is room; nil when there
// is none. Secrets are compared in constant time, though both sides are
// the source's own (a delivery brings none).
func (m *keyedMACs) find(secret []byte) *keyed {
	m.mu.RLock()
	k := m.lookup(secret)
	m.mu.RUnlock()
	if k != nil {
		return k
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if k = m.lookup(secret); k == nil && len(m.keys) < maxKeyed {
		k = &keyed{secret: append([]byte(nil), secret...)}
		m.keys = append(m.keys, k)
	}
	return k
}

func (m *keyedMACs) lookup(secret []byte) *keyed {
	for _, k := range m.keys {
		if subtle.ConstantTimeCompare(k.secret, secret) == 1 {
			return k
		}
	}
	return nil
}
