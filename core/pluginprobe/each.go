package pluginprobe

import (
	"context"
	"os"
	"sync"

	"github.com/clawhost/clawhost/core/config"
)

// Each calls f for each of plugins whose binary is there, concurrently,
// each with a context bounded by that plugin's start timeout, and returns
// once every call has. A plugin whose binary is missing is skipped: its
// start says why. f runs on its own goroutine: what it gathers it guards.
func Each(plugins []*config.Plugin, f func(ctx context.Context, p *config.Plugin)) {
	var wg sync.WaitGroup
	for _, p := range plugins {
		if _, err := os.Stat(p.Path); err != nil {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), p.StartTimeout.Duration())
			defer cancel()
			f(ctx, p)
		})
	}
	wg.Wait()
}
