// Package input is the one judgement of what an operator may send: the
// rules the admin API states in its OpenAPI document and checks at its edge
// (internal/operator/admin), and that the CLI checks before it sends or
// stores anything. It depends on nothing but the standard library, google/uuid
// and internal/refusal (whose refusal.Invalid every refusal here is), so
// every front end can share it.
//
// The rules:
//   - Text is valid UTF-8 without NUL or control characters (C0, DEL, C1:
//     U+0000-U+001F, U+007F-U+009F), at most a stated number of characters
//     (MaxText unless a field says otherwise). The document states it as
//     TextPattern and maxLength.
//   - A uuid is canonical: 36 characters, lowercase hex and hyphens
//     (UUIDPattern, with format uuid). urn:uuid:, braces, bare hex and upper
//     case are refused, not read, so one id has one spelling everywhere
//     (a filter and a path agree, a scoped token's tenant compares equal).
//   - A numeric id is a whole number of at least 1.
//   - Numbers have bounds (the Max* constants below), checked before any
//     database sees them.
//   - Where a value is meant, an empty one is refused, not taken for absent,
//     and so is one of spaces only (ValuePattern).
//   - Since must be before until.
//
// The invariant: what passes here never makes a database refuse the
// request on its encoding or range (no SQLSTATE 22xxx reaches an answer).
package input

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/internal/refusal"
)

// TextPattern is the pattern of text (ECMA-262 and RE2 alike): no C0
// control character, no DEL, no C1 control character. It says nothing of
// UTF-8 validity, which Text checks besides.
const TextPattern = `^[^\x00-\x1F\x7F-\x9F]*$`

// TextPatternDescription is how a refusal by TextPattern reads.
const TextPatternDescription = "text without NUL or control characters"

// ValuePattern is the pattern of text a person gives as a value (a name,
// an account, a customer): TextPattern with at least one character that is
// no space (U+0020, U+00A0; every other space below U+00A0 is a control
// character). The spaces beyond (U+3000, ...) are not named: a pattern
// that reads them alike in RE2, ECMA-262 and Python would have to hold
// them as themselves, which YAML renderings of the document mangle.
const ValuePattern = `^[^\x00-\x1F\x7F-\x9F]*[^\x00-\x20\x7F-\xA0][^\x00-\x1F\x7F-\x9F]*$`

// ValuePatternDescription is how a refusal by ValuePattern reads.
const ValuePatternDescription = TextPatternDescription + ", not only spaces"

// UUIDPattern is the canonical spelling of a uuid.
const UUIDPattern = `^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`

// UUIDPatternDescription is how a refusal by UUIDPattern reads.
const UUIDPatternDescription = "a canonical uuid (lowercase, 8-4-4-4-12)"

// Lengths, in characters.
const (
	// MaxText bounds any text a field does not bound otherwise: provider
	// ids (event, object, customer, account), kinds, groups, filters.
	MaxText = 255
	// MaxName bounds names a person gives (a tenant, a workspace, a token).
	MaxName = 200
	// MaxSecret bounds a signing secret.
	MaxSecret = 1024
	// MaxKey bounds an Idempotency-Key.
	MaxKey = 255
)

// Bounds of numbers.
const (
	// MaxToleranceSeconds bounds how far a signed timestamp may be from
	// now: a day. Providers use minutes (Stripe 300 s); a longer window only
	// widens what a captured delivery can be replayed within.
	MaxToleranceSeconds = 86400
	// MaxOverlapSeconds bounds how long old secrets stay valid after a
	// rotation: 30 days.
	MaxOverlapSeconds = 30 * 86400
	// MaxRate bounds a tenant's ingest rate (events per second per ingest
	// instance) and MaxBurst its burst.
	MaxRate  = 1_000_000
	MaxBurst = 1_000_000
	// MinPage and MaxPage bound a page of a list.
	MinPage, MaxPage = 1, 500
)

// refuse is every refusal of this package: refusal.Invalid naming the
// field at fault and why, in words for a person; it never repeats the
// value (which may be a secret).
func refuse(field, format string, args ...any) error {
	return refusal.InvalidField(field, format, args...)
}

var textRe = regexp.MustCompile(TextPattern)

// Text checks v as text of at most max characters (MaxText when max is
// 0). Empty text passes: Required says when a value is meant.
func Text(field, v string, max int) error {
	if max == 0 {
		max = MaxText
	}
	switch {
	case !utf8.ValidString(v):
		return refuse(field, "is not valid UTF-8")
	case !textRe.MatchString(v):
		return refuse(field, "must be %s", TextPatternDescription)
	case utf8.RuneCountInString(v) > max:
		return refuse(field, "must be at most %d characters", max)
	}
	return nil
}

// Required refuses an empty value, and one of spaces only (as
// ValuePattern says).
func Required(field, v string) error {
	switch {
	case v == "":
		return refuse(field, "must not be empty")
	case strings.Trim(v, " \u00a0") == "":
		return refuse(field, "must not be only spaces")
	}
	return nil
}

var uuidRe = regexp.MustCompile(UUIDPattern)

// UUID checks v as a canonical uuid. Empty passes (an absent filter).
func UUID(field, v string) error {
	if v != "" && !uuidRe.MatchString(v) {
		return refuse(field, "must be %s", UUIDPatternDescription)
	}
	return nil
}

// IsUUID reports whether v is a canonical uuid.
func IsUUID(v string) bool { return uuidRe.MatchString(v) }

// ID reads a numeric id: a whole number of at least 1.
func ID(field, v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 0, refuse(field, "must be a whole number of at least 1")
	}
	return n, nil
}

// Between checks min <= v <= max.
func Between(field string, v, min, max int64) error {
	if v < min || v > max {
		return refuse(field, "must be between %d and %d", min, max)
	}
	return nil
}

// Range checks a time range: since before until when both are given.
func Range(since, until time.Time) error {
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return refuse("until", "must be after since")
	}
	return nil
}

// Lifetime checks the lifetime of a credential: positive and at most max.
func Lifetime(field string, d, max time.Duration) error {
	if d <= 0 || d > max {
		return refuse(field, "must be positive and at most %s", strings.TrimSuffix(max.String(), "0m0s"))
	}
	return nil
}

// JSONText checks free-form JSON (a kind's settings, a schema) for what
// no text may hold anywhere in it: NUL, as a raw byte or escaped
// (\u0000), which Postgres refuses in text and jsonb alike.
func JSONText(field string, raw []byte) error {
	if !utf8.Valid(raw) {
		return refuse(field, "is not valid UTF-8")
	}
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case 0:
			return refuse(field, "must not hold NUL (U+0000)")
		case '\\':
			if i+5 < len(raw) && raw[i+1] == 'u' && string(raw[i+2:i+6]) == "0000" {
				return refuse(field, "must not hold NUL (U+0000)")
			}
			i++ // the escaped character, whatever it is (\\ included)
		}
	}
	return nil
}
