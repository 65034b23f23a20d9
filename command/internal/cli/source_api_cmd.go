package cli

import (
	"context"
	"errors"
	"io"
	"os"
)

// SourceSetAPICredentialsCmd stores a source's provider API credentials,
// sealed with the key ring. They are read from a file or stdin (never a
// flag: a command line is visible to every user of the machine) and are
// never printed back.
type SourceSetAPICredentialsCmd struct {
	Output
	Source      string `required:"" help:"Source id." input:"uuid"`
	Credentials string `name:"credentials-file" required:"" help:"File holding the kind's credentials as JSON ('-': stdin). stripe: {\"secret_key\":\"rk_...\"}; github: {\"app_id\":1,\"private_key\":\"-----BEGIN...\"}." input:"max=4096"`
}

func (c *SourceSetAPICredentialsCmd) Run(ctx context.Context, g *Globals) error {
	creds, err := c.read()
	if err != nil {
		return err
	}
	s, done, err := g.store(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	if err := s.SetAPICredentials(ctx, c.Source, creds); err != nil {
		return err
	}
	return c.print(c.Source, map[string]any{"api_credentials": "set"}, "API credentials stored (sealed); sluice reconcile may use them")
}

// maxCredentials bounds what is read: a private key is a few KiB.
const maxCredentials = 64 << 10

func (c *SourceSetAPICredentialsCmd) read() ([]byte, error) {
	r := io.Reader(os.Stdin)
	if c.Credentials != "-" {
		f, err := os.Open(c.Credentials)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	creds, err := io.ReadAll(io.LimitReader(r, maxCredentials+1))
	switch {
	case err != nil:
		return nil, err
	case len(creds) > maxCredentials:
		return nil, errors.New("credentials over 64 KiB")
	}
	return creds, nil
}

// SourceClearAPICredentialsCmd removes a source's API credentials.
type SourceClearAPICredentialsCmd struct {
	Output
	Source string `required:"" help:"Source id." input:"uuid"`
}

func (c *SourceClearAPICredentialsCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.ClearAPICredentials(ctx, c.Source); err != nil {
		return err
	}
	return c.print(c.Source, map[string]any{"api_credentials": "cleared"}, "API credentials removed; the source is no longer reconciled")
}
