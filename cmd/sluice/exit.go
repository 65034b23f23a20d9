package main

// How a command ends when it fails: commands return their errors, and this
// file alone decides what is printed and the exit status.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// exitCode is how sluice ended, for scripts.
type exitCode int

const (
	// exitOK: the command did what it was asked.
	exitOK exitCode = 0
	// exitRefused: the operation was refused or failed (stderr says why).
	exitRefused exitCode = 1
)

// failure reports err, a command's refusal: its message on stderr, and,
// when the command was asked for -o json, also {"error": {...}} on stdout,
// so a script reading stdout always gets one JSON object.
func failure(kctx *kong.Context, err error, stdout, stderr io.Writer, log *slog.Logger) exitCode {
	msg := humane(err, log)
	fmt.Fprintln(stderr, "sluice:", msg)
	if outputOf(kctx) == "json" {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"error": errorFields(err, msg)})
	}
	return exitRefused
}

// outputOf is the -o of the command kctx selected ("" when it takes none).
func outputOf(kctx *kong.Context) string {
	if kctx == nil {
		return ""
	}
	for _, f := range kctx.Flags() {
		if f.Name == "output" {
			v, _ := kctx.FlagValue(f).(string)
			return v
		}
	}
	return ""
}

// errorFields is the JSON of a refusal: its message, and what a typed
// error adds for a script to act on.
func errorFields(err error, msg string) map[string]any {
	var ce *catalog.Error
	if errors.As(err, &ce) {
		return map[string]any{"code": ce.Code, "field": ce.Field, "message": ce.Message, "refused": ce.Refused,
			"checked": ce.Checked, "examples": ce.Examples}
	}
	return map[string]any{"message": msg}
}

// humane is what a person reads of err. The operations word their own
// errors; what still carries the database's own text (a SQLSTATE, a
// constraint) is a fault no operation foresaw: it is logged at debug level
// and replaced by a sentence. An incompatible event type lists the first
// events it would refuse.
func humane(err error, log *slog.Logger) string {
	var ce *catalog.Error
	if errors.As(err, &ce) && len(ce.Examples) > 0 {
		return describeIncompatible(ce)
	}
	if !pg.IsFromPostgres(err) {
		return err.Error()
	}
	log.Debug("database error", slog.Any("error", err))
	if pg.Classify(err) == pg.FaultTransient {
		return "the database could not answer now; try again (--log-level debug shows its own words)"
	}
	return "the database refused the request (--log-level debug shows its own words)"
}

// describeIncompatible is how a person reads an incompatible version: the
// count, then the first events it would refuse.
func describeIncompatible(ce *catalog.Error) string {
	var b strings.Builder
	b.WriteString(ce.Message)
	for _, ex := range ce.Examples {
		fmt.Fprintf(&b, "\n  inbox %d (event %s): %s", ex.InboxID, ex.EventID, ex.Reason)
	}
	return b.String()
}
