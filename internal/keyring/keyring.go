// Package keyring encrypts source secrets at rest.
//
// A key ring holds one or more AES-256 keys, each with an id. The first key
// encrypts; any key decrypts what it encrypted, so the key can be rotated by
// putting a new key first and keeping the old one until every secret was
// re-encrypted. A secret never leaves this package unencrypted except to the
// verifier that needs it.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnknownKey is returned when a ciphertext names a key the ring lacks.
var ErrUnknownKey = errors.New("keyring: unknown key id")

// Ring is a set of keys; the zero value is unusable, build one with Parse.
type Ring struct {
	primary string
	ids     []string // in the order given
	aeads   map[string]cipher.AEAD
}

// Parse reads a key ring from its textual form: a comma-separated list of
// keys, each `id:base64` or plain `base64` (32 bytes once decoded). A key
// without an id gets one derived from its bytes, so the same key always has
// the same id. The first key is the one that encrypts.
func Parse(spec string) (*Ring, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("keyring: no key given (set SLUICE_SECRET_KEY to base64 of 32 random bytes)")
	}
	r := &Ring{aeads: map[string]cipher.AEAD{}}
	for i, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		id, encoded, hasID := strings.Cut(part, ":")
		if !hasID {
			encoded, id = id, ""
		}
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %d is not base64: %w", i+1, err)
		}
		if len(key) != 32 {
			return nil, fmt.Errorf("keyring: key %d has %d bytes, want 32", i+1, len(key))
		}
		if id == "" {
			sum := sha256.Sum256(key)
			id = hex.EncodeToString(sum[:4])
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %s: %w", id, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("keyring: key %s: %w", id, err)
		}
		if _, dup := r.aeads[id]; dup {
			return nil, fmt.Errorf("keyring: key id %q given twice", id)
		}
		r.aeads[id] = aead
		r.ids = append(r.ids, id)
		if i == 0 {
			r.primary = id
		}
	}
	return r, nil
}

// Primary is the id of the key that seals: the first of the ring.
func (r *Ring) Primary() string { return r.primary }

// IDs are the ring's key ids, the primary first.
func (r *Ring) IDs() []string { return slices.Clone(r.ids) }

// Has says whether the ring holds a key of that id.
func (r *Ring) Has(keyID string) bool {
	_, ok := r.aeads[keyID]
	return ok
}

// Generate returns the textual form of a new random single-key ring.
func Generate() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("keyring: random key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(key), nil
}

// Seal encrypts plaintext with the primary key. additional binds the
// ciphertext to its owner (a source id) so it cannot be moved to another row.
func (r *Ring) Seal(plaintext, additional []byte) (keyID string, ciphertext []byte, err error) {
	aead := r.aeads[r.primary]
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", nil, fmt.Errorf("keyring: nonce: %w", err)
	}
	return r.primary, aead.Seal(nonce, nonce, plaintext, additional), nil
}

// Open decrypts what Seal produced with the key keyID.
func (r *Ring) Open(keyID string, ciphertext, additional []byte) ([]byte, error) {
	aead, ok := r.aeads[keyID]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, keyID)
	}
	if len(ciphertext) < aead.NonceSize() {
		return nil, errors.New("keyring: ciphertext too short")
	}
	nonce, sealed := ciphertext[:aead.NonceSize()], ciphertext[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, sealed, additional)
	if err != nil {
		return nil, fmt.Errorf("keyring: decrypt with key %s: %w", keyID, err)
	}
	return plain, nil
}
