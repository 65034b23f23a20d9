package pg

import "strings"

// Text makes s storable in a text column, within max bytes: valid UTF-8
// (invalid bytes become U+FFFD) and no NUL, which Postgres text refuses.
// For messages that may quote what a sender wrote (a schema's complaint
// about a value), so one odd value can never fail the statement storing it.
func Text(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "")
	}
	return s
}
