package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"time"
)

// adminToken creates an operate token with the binary under measurement
// (`sluice admintoken create`), confined to tenant unless it is empty: the
// bench reaches the operator layer only as operators do.
func (b *bench) adminToken(ctx context.Context, tenant, name string) (string, error) {
	args := []string{"admintoken", "create", "--role", "operate", "--name", name, "--expires", time.Hour.String(), "-o", "json"}
	if tenant != "" {
		args = append(args, "--tenant", tenant)
	}
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = b.sluiceEnv(b.stageAddr, b.slot("admin"))
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("sluice admintoken create: %w", commandError(err))
	}
	var created struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(out, &created); err != nil || created.Token == "" {
		return "", fmt.Errorf("sluice admintoken create printed %q: %v", out, err)
	}
	return created.Token, nil
}

// commandError adds what a failed command wrote to its standard error.
func commandError(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, ee.Stderr)
	}
	return err
}
