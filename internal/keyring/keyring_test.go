package keyring

import (
	"errors"
	"strings"
	"testing"
)

func TestSealOpenRoundTripAndRotation(t *testing.T) {
	t.Parallel()
	oldKey, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	newKey, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	oldRing, err := Parse("old:" + oldKey)
	if err != nil {
		t.Fatal(err)
	}
	id, sealed, err := oldRing.Seal([]byte("whsec_abc"), []byte("source-1"))
	if err != nil {
		t.Fatal(err)
	}
	if id != "old" {
		t.Fatalf("key id = %q, want old", id)
	}

	rotated, err := Parse("new:" + newKey + ",old:" + oldKey)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := rotated.Open(id, sealed, []byte("source-1"))
	if err != nil {
		t.Fatalf("rotated ring cannot open an old secret: %v", err)
	}
	if string(plain) != "whsec_abc" {
		t.Fatalf("plaintext = %q", plain)
	}
	if id, _, _ := rotated.Seal([]byte("x"), nil); id != "new" {
		t.Fatalf("rotated ring encrypts with %q, want new", id)
	}
}

func TestOpenRejectsMovedOrTamperedSecret(t *testing.T) {
	t.Parallel()
	key, _ := Generate()
	ring, err := Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	id, sealed, err := ring.Seal([]byte("secret"), []byte("source-1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ring.Open(id, sealed, []byte("source-2")); err == nil {
		t.Fatal("a secret moved to another source decrypted")
	}
	sealed[len(sealed)-1] ^= 1
	if _, err := ring.Open(id, sealed, []byte("source-1")); err == nil {
		t.Fatal("a tampered secret decrypted")
	}
	if _, err := ring.Open("nope", sealed, nil); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("unknown key: err = %v", err)
	}
}

func TestParseRejectsBadKeys(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"", "not base64!", "c2hvcnQ=", "a:" + strings.Repeat("A", 44) + ",a:" + strings.Repeat("A", 44)} {
		if _, err := Parse(spec); err == nil {
			t.Errorf("Parse(%q) accepted", spec)
		}
	}
}

// A ring names its keys in the order given, the first sealing, so a
// rotation can tell what is sealed by another key than the first.
func TestRingNamesItsKeysFirstSealing(t *testing.T) {
	t.Parallel()
	a, _ := Generate()
	b, _ := Generate()
	r, err := Parse("new:" + a + ",old:" + b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Primary() != "new" || strings.Join(r.IDs(), ",") != "new,old" || !r.Has("old") || r.Has("lost") {
		t.Fatalf("primary %q, ids %v, has old %v, has lost %v", r.Primary(), r.IDs(), r.Has("old"), r.Has("lost"))
	}
	if id, _, _ := r.Seal([]byte("x"), nil); id != "new" {
		t.Fatalf("sealed with %q, want new", id)
	}
}
