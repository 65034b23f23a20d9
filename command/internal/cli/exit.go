package cli

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

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// exitCode is how sluice ended, for scripts.
type exitCode int

const (
	// exitOK: the command did what it was asked.
	exitOK exitCode = 0
	// exitRefused: the operation was refused or failed (stderr says why).
	exitRefused exitCode = 1
	// exitUsage: the command line is wrong: an unknown command or flag, a
	// missing argument, a bad value (stderr names it, and where help is).
	exitUsage exitCode = 2
)

// misuse reports a command line that was refused before anything ran: one
// line, the help to read, exit 2 (and {"error": ...} for -o json, as
// failure). kctx is as far as kong read the line (a kong.ParseError
// carries its own).
func misuse(name string, err error, kctx *kong.Context, args []string, stdout, stderr io.Writer) exitCode {
	if pe := (*kong.ParseError)(nil); errors.As(err, &pe) {
		kctx = pe.Context
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	fmt.Fprintln(stderr, name+":", shownMessage(msg))
	fmt.Fprintf(stderr, "hint: %s --help\n", commandPath(name, kctx))
	if format, takes := outputOf(kctx); format == "json" || takes && asksJSON(args) {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"error": map[string]any{"message": msg}})
	}
	return exitUsage
}

// commandPath is the command kctx got as far as ("sluice tenant get"), of
// the binary called name.
func commandPath(name string, kctx *kong.Context) string {
	if kctx != nil {
		if node := kctx.Selected(); node != nil {
			return node.FullPath()
		}
	}
	return name
}

// asksJSON says whether args hold -o json, for a command line refused
// before kong read that far.
func asksJSON(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "-ojson" || a == "-o=json" || a == "--output=json":
			return true
		case (a == "-o" || a == "--output") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// failure reports err, a command's refusal or failure: its message on
// stderr, and, when the command was asked for -o json, also {"error":
// {...}} on stdout, so a script reading stdout always gets one JSON object.
// Every refusal exits 1 whatever its kind (internal/refusal), as a failure
// does: 0, 1 and 2 are the contract scripts rely on (docs/operating.md);
// the kind and sub-kind are the JSON's code (errorFields).
func failure(name string, kctx *kong.Context, err error, stdout, stderr io.Writer, log *slog.Logger) exitCode {
	msg := humane(err, log)
	fmt.Fprintln(stderr, name+":", shownMessage(msg))
	if format, _ := outputOf(kctx); format == "json" && !errors.As(err, new(reported)) {
		_ = json.NewEncoder(stdout).Encode(map[string]any{"error": errorFields(err, msg)})
	}
	return exitRefused
}

// reported is a refusal whose result the command already printed on stdout
// (`sluice doctor`'s failing lines): stdout stays one JSON object.
type reported struct{ error }

func (r reported) Unwrap() error { return r.error }

// outputOf is the -o of the command kctx selected, as far as kong read
// it, and whether the command takes one.
func outputOf(kctx *kong.Context) (format string, takes bool) {
	if kctx == nil {
		return "", false
	}
	for _, f := range kctx.Flags() {
		if f.Name == "output" {
			format, _ = kctx.FlagValue(f).(string)
			return format, true
		}
	}
	return "", false
}

// errorFields is the JSON of a failure: its message and, for a refusal
// (internal/refusal), its code (the sub-kind's, or the kind's: not_found,
// conflict, invalid, forbidden, unauthenticated, limited, unavailable;
// builtin, quota, incompatible, already_replayed...) and the input at
// fault; what a typed error adds for a script to act on.
func errorFields(err error, msg string) map[string]any {
	fields := map[string]any{"message": msg}
	if r, ok := refusal.Of(err); ok {
		fields["code"] = r.Name()
		if r.Field != "" {
			fields["field"] = r.Field
		}
	}
	var incompatible *catalog.IncompatibleError
	if errors.As(err, &incompatible) {
		// The examples are their own member, not lines of the message.
		fields["message"] = incompatible.Message
		fields["refused"], fields["checked"], fields["examples"] = incompatible.Refused, incompatible.Checked, incompatible.Examples
	}
	var rotation *RotationError
	if errors.As(err, &rotation) {
		fields["primary"], fields["kinds"] = rotation.Primary, rotation.Kinds
	}
	var stopped *operate.ReplayError
	if errors.As(err, &stopped) {
		replayed := stopped.Replayed
		if replayed == nil {
			replayed = []int64{}
		}
		fields["replayed"], fields["failed_id"] = replayed, stopped.ID
	}
	return fields
}

// humane is what a person reads of err. The operations word their own
// errors; what still carries the database's own text (a SQLSTATE, a
// constraint) is a fault no operation foresaw: it is logged at debug level
// and replaced by a sentence. An incompatible event type lists the first
// events it would refuse.
func humane(err error, log *slog.Logger) string {
	var ce *catalog.IncompatibleError
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
func describeIncompatible(ce *catalog.IncompatibleError) string {
	var b strings.Builder
	b.WriteString(ce.Message)
	for _, ex := range ce.Examples {
		fmt.Fprintf(&b, "\n  inbox %d (event %s): %s", ex.InboxID, ex.EventID, ex.Reason)
	}
	return b.String()
}
