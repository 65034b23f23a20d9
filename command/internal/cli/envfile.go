package cli

// Secrets from files, the _FILE convention of container images: a flag
// tagged envfile:"" that reads $NAME also reads the file $NAME_FILE names
// (a Kubernetes or Docker secret mounted as a file), so the secret never
// sits in the process's environment, where `docker inspect`, /proc/<pid>/
// environ and crash reporters can read it.
//
// One resolver serves every such flag rather than a copy per variable: the
// rules (one trailing newline trimmed, both set refused, an unreadable file
// named by its path and never quoted) are then the same for each, a new
// secret flag gets them with one tag, and the configuration page lists
// every _FILE variable from the same tag (docs_cmd.go).

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"
)

// maxSecretFile is the most a secret file may hold: a key ring of many
// keys or a certificate-sized credential fits; a path naming a device or a
// log by mistake is refused rather than read whole.
const maxSecretFile = 64 << 10

// envFiles resolves flags tagged envfile:"" from $NAME_FILE, the
// variables lookup (os.LookupEnv) reads. kong asks it only for flags the
// command line did not set: a flag given there wins, as it wins over $NAME.
func envFiles(lookup func(string) (string, bool)) kong.ResolverFunc {
	return func(_ *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
		if !readsEnvFile(flag) {
			return nil, nil
		}
		for _, name := range flag.Envs {
			value, found, err := fromEnvFile(name, lookup)
			if err != nil {
				return nil, err
			}
			if found {
				return value, nil
			}
		}
		return nil, nil
	}
}

// readsEnvFile says whether flag also reads its variables' _FILE.
func readsEnvFile(flag *kong.Flag) bool { return flag.Tag != nil && flag.Tag.Has("envfile") }

// fromEnvFile reads the value of variable name from the file
// name+"_FILE" names, when that is set: its content with one trailing
// newline ("\n" or "\r\n") trimmed, as `echo` and editors leave one. Both
// name and name_FILE set (non-empty) is refused, naming both: which one
// was meant cannot be guessed. An empty name_FILE is unset (compose files
// often pass variables through empty).
func fromEnvFile(name string, lookup func(string) (string, bool)) (string, bool, error) {
	fileVar := name + "_FILE"
	path, ok := lookup(fileVar)
	if !ok || path == "" {
		return "", false, nil
	}
	if v, ok := lookup(name); ok && v != "" {
		return "", false, fmt.Errorf("%s and %s are both set: set one of them", name, fileVar)
	}
	content, err := readSecretFile(path)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", fileVar, err)
	}
	if trimmed, ok := strings.CutSuffix(content, "\r\n"); ok {
		return trimmed, true, nil
	}
	return strings.TrimSuffix(content, "\n"), true, nil
}

// readSecretFile reads a secret file of at most maxSecretFile bytes. Its
// errors name the path and the reason, never any of the content.
func readSecretFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", path, unwrapPath(err))
	}
	if len(raw) > maxSecretFile {
		return "", fmt.Errorf("cannot read %s: more than %d bytes, too large for a secret", path, maxSecretFile)
	}
	return string(raw), nil
}

// unwrapPath is a *fs.PathError's reason alone (the message names the path
// already).
func unwrapPath(err error) error {
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
