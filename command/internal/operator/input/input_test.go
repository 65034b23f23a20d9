package input_test

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Text is refused for NUL, control characters (C0, DEL, C1), bytes that
// are no UTF-8 and length; anything else a person types passes.
func TestTextRefusesControlsInvalidUTF8AndLength(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"acme", true}, {"", true}, {"Zürich café 東京 🚀", true}, {"tab\there", false}, {"a\x00b", false},
		{"esc\x1b[2J", false}, {"del\x7f", false}, {"c1\u0085", false}, {"bad\xff", false}, {strings.Repeat("é", 10), true},
		{strings.Repeat("é", 11), false},
	} {
		max := 10
		if !strings.HasPrefix(c.v, "é") {
			max = 0 // MaxText
		}
		err := input.Text("name", c.v, max)
		if (err == nil) != c.ok {
			t.Errorf("Text(%q): %v, want ok=%v", c.v, err, c.ok)
		}
		if err != nil && (!errors.Is(err, refusal.ErrInvalid) || strings.Contains(err.Error(), c.v)) {
			t.Errorf("Text(%q): %v, want an input error that does not repeat the value", c.v, err)
		}
	}
}

// A uuid has one spelling: canonical lowercase.
func TestUUIDAcceptsOnlyTheCanonicalSpelling(t *testing.T) {
	t.Parallel()
	id := "5b2e1d4c-0000-4000-8000-00000000abcd"
	if err := input.UUID("tenant_id", id); err != nil {
		t.Errorf("canonical: %v", err)
	}
	for _, v := range []string{"urn:uuid:" + id, "{" + id + "}", strings.ReplaceAll(id, "-", ""), strings.ToUpper(id), "x"} {
		if input.UUID("tenant_id", v) == nil || input.IsUUID(v) {
			t.Errorf("%q accepted", v)
		}
	}
}

// Numeric ids are whole numbers of at least 1; ranges run forwards;
// lifetimes are positive and bounded; free-form JSON holds no NUL.
func TestIDsRangesLifetimesAndJSON(t *testing.T) {
	t.Parallel()
	if n, err := input.ID("id", "42"); n != 42 || err != nil {
		t.Errorf("ID(42): %d %v", n, err)
	}
	for _, v := range []string{"0", "-1", "1e3", "x", "9223372036854775808"} {
		if _, err := input.ID("id", v); err == nil {
			t.Errorf("ID(%q) accepted", v)
		}
	}
	now := time.Now()
	if input.Range(now, now.Add(time.Second)) != nil || input.Range(now, now) == nil || input.Range(now.Add(time.Second), now) == nil ||
		input.Range(now, time.Time{}) != nil {
		t.Error("Range")
	}
	year := 365 * 24 * time.Hour
	if input.Lifetime("expires", 0, year) == nil || input.Lifetime("expires", -time.Hour, year) == nil ||
		input.Lifetime("expires", year+time.Second, year) == nil || input.Lifetime("expires", time.Hour, year) != nil {
		t.Error("Lifetime")
	}
	for raw, ok := range map[string]bool{`{"a":"b"}`: true, `{"a":"\u0000"}`: false, `{"a":"\\u0000"}`: true, "{\"a\":\"\x00\"}": false, `{"a":"\u00e9"}`: true} {
		if (input.JSONText("settings", []byte(raw)) == nil) != ok {
			t.Errorf("JSONText(%s): want ok=%v", raw, ok)
		}
	}
}

// ValuePattern takes the text Text takes but for text of spaces only, as
// Required judges spaces: the document and the CLI refuse the same values.
func TestValuePatternRefusesWhatRequiredRefuses(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(input.ValuePattern)
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"acme", true}, {" acme ", true}, {"a", true}, {"東京", true}, {"\u00a0x", true}, {"x\u3000", true},
		{" ", false}, {"   ", false}, {"\u00a0", false}, {" \u00a0 ", false}, {"\t", false}, {"", false},
	} {
		pattern := re.MatchString(c.v)
		checks := input.Text("name", c.v, 0) == nil && input.Required("name", c.v) == nil
		if pattern != c.ok || checks != c.ok {
			t.Errorf("%q: ValuePattern matches %v, Text and Required pass %v, want %v", c.v, pattern, checks, c.ok)
		}
	}
	if err := input.Required("name", " \u00a0"); err == nil || !strings.Contains(err.Error(), "only spaces") {
		t.Errorf("Required of spaces: %v, want a refusal saying only spaces", err)
	}
}
