package cli

// What an operator types is checked by the rules of internal/operator/input
// (the admin API's edge checks the same ones) in one place, before any
// command runs: a value a rule refuses is a usage error (exit 2, one line
// naming the flag), never a sentence of the database's.
//
// Every text flag and argument of a command is text of at most
// input.MaxText characters unless its `input` tag says otherwise:
//
//	input:"uuid"    a canonical uuid (lowercase 8-4-4-4-12); empty is absent
//	input:"id"      a numeric id (an int64): at least 1 when given
//	input:"name"    text of at most input.MaxName characters
//	input:"secret"  text of at most input.MaxSecret characters
//	input:"max=N"   text of at most N characters
//
// A required value given empty is refused. Bytes that are no UTF-8 are
// refused from the raw line (checkEncoding): kong reads them as U+FFFD.
// The global flags (database URL, brokers...) are the deployment's
// configuration, not an operator's input, and are not checked here.
// TestEveryCommandFlagHasAKnownInputRule holds every command to a known
// rule, and every flag naming a tenant, source, endpoint or other id to
// input:"uuid".

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/kong"

	"github.com/sluicehq/sluice/command/internal/operator/input"
)

// Validate checks the flags and arguments of the selected command by the
// input rules; kong calls it after parsing, before the command runs, and
// reports its refusal as a usage error.
func (c *CLI) Validate(kctx *kong.Context) error {
	for node := kctx.Selected(); node != nil && node.Type != kong.ApplicationNode; node = node.Parent {
		for _, f := range node.Flags {
			if err := checkValue(f.Value, "--"+f.Name); err != nil {
				return err
			}
		}
		for _, p := range node.Positional {
			if err := checkValue(p, "<"+p.Name+">"); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkValue applies v's rule to its value, named as the command line
// names it.
func checkValue(v *kong.Value, name string) error {
	if !v.Target.IsValid() || !v.Set {
		return nil // not given: a missing required value is kong's to name
	}
	rule := v.Tag.Get("input")
	target := v.Target
	if target.Kind() == reflect.Pointer {
		if target.IsNil() {
			return nil
		}
		target = target.Elem()
	}
	switch {
	case rule == "id":
		return checkID(target, name)
	case target.Kind() == reflect.String:
		return checkText(rule, name, target.String(), v.Required)
	case target.Kind() == reflect.Slice && target.Type().Elem().Kind() == reflect.String:
		for i := 0; i < target.Len(); i++ {
			if err := checkText(rule, name, target.Index(i).String(), true); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkID refuses a numeric id below 1.
func checkID(target reflect.Value, name string) error {
	if target.Kind() != reflect.Int64 {
		panic(fmt.Sprintf("%s: input:\"id\" on a %s, want an int64", name, target.Type())) // a bug of this binary
	}
	_, err := input.ID(name, strconv.FormatInt(target.Int(), 10))
	return err
}

// checkText checks one text value by rule.
func checkText(rule, name, v string, required bool) error {
	if required {
		if err := input.Required(name, v); err != nil {
			return err
		}
	}
	switch rule {
	case "uuid":
		return input.UUID(name, v)
	case "name":
		return input.Text(name, v, input.MaxName)
	case "secret":
		return input.Text(name, v, input.MaxSecret)
	case "":
		return input.Text(name, v, input.MaxText)
	}
	max, err := strconv.Atoi(strings.TrimPrefix(rule, "max="))
	if !strings.HasPrefix(rule, "max=") || err != nil || max < 1 {
		panic(fmt.Sprintf("%s: unknown input rule %q", name, rule)) // a bug of this binary
	}
	return input.Text(name, v, max)
}

// checkEncoding refuses an argument that is no UTF-8, named by its flag
// where one goes before it (--name=x or --name x).
func checkEncoding(args []string) error {
	for i, a := range args {
		if utf8.ValidString(a) {
			continue
		}
		name := fmt.Sprintf("argument %d", i+1)
		if flag, _, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") && utf8.ValidString(flag) {
			name = flag
		} else if i > 0 && strings.HasPrefix(args[i-1], "-") {
			name = args[i-1]
		}
		return input.Text(name, a, 0)
	}
	return nil
}
