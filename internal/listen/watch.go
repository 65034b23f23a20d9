package listen

import (
	"context"
	"log/slog"
	"time"
)

// Watch runs the checks marked Refuse every interval until ctx ends and
// logs each failing one at ERROR: when it starts failing, then once every
// repeat while it still fails, and at INFO when it passes again. A
// privilege revoked from a running process is a fault a person must fix;
// without this line it would only look like a stall.
func Watch(ctx context.Context, checks []Check, interval, repeat time.Duration, log *slog.Logger) error {
	var watched []Check
	for _, c := range checks {
		if c.Refuse {
			watched = append(watched, c)
		}
	}
	if len(watched) == 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	since := make([]time.Time, len(watched)) // when each last logged its failure; zero while passing
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now := time.Now()
		for i, err := range Run(ctx, watched) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c := watched[i]
			switch {
			case !c.Refuses(err):
				if err == nil && !since[i].IsZero() {
					log.Info("deployment check passes again", slog.String("check", c.Name), slog.String("stage", c.Stage))
					since[i] = time.Time{}
				}
			case since[i].IsZero() || now.Sub(since[i]) >= repeat:
				log.Error("deployment check failing", slog.String("check", c.Name), slog.String("stage", c.Stage), slog.Any("error", err))
				since[i] = now
			}
		}
	}
}
