package pluginhost

import (
	"context"
	"sort"
	"sync"
)

// AwaitCommandPlugins waits for every configured instance that may offer
// commands and is not ready yet — starting, or restarting — each bounded by
// its start timeout, and returns the instances that are ready command
// plugins afterwards (those ready before included), sorted. An instance
// known not to be a command plugin (its last description says so), and one
// that is settled (missing, misconfigured) or stopped, is not waited for;
// with none left it returns at once. The router calls it for a "/word" no
// registered command matches, so a command of a plugin still starting is
// not sent to the agent as text.
func (p Ports) AwaitCommandPlugins(ctx context.Context) []string {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		ready []string
	)
	for _, inst := range p.h.Instances() {
		if _, desc, ok := inst.Client(); ok {
			if desc.Command {
				mu.Lock()
				ready = append(ready, inst.Name())
				mu.Unlock()
			}
			continue
		}
		st := inst.Status()
		if st.State == StateStopped || st.State.settled() || st.State == StateStandby {
			continue // standby: another host serves it
		}
		if last := st.Description; last.Name != "" && !last.Command {
			continue // a channel or hook plugin
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, cancel := context.WithTimeout(ctx, inst.startTimeout())
			defer cancel()
			if _, desc, err := inst.WaitReady(wctx); err == nil && desc.Command {
				mu.Lock()
				ready = append(ready, inst.Name())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(ready)
	return ready
}
