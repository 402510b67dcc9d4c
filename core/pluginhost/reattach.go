package pluginhost

import (
	"fmt"

	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// attach connects to a plugin an author started by hand in debug mode
// (Options.Reattach) instead of launching one. The host does not own that
// process: stopping the instance closes the connection, which makes the
// sdk's debug mode exit; it is never signalled, and it has no liveness
// probe (a breakpoint is not a hang).
func (i *Instance) attach() (*Process, *pluginclient.Plugin, error) {
	client := pluginclient.NewClient(pluginclient.Launch{Reattach: i.reattach.ReattachConfig, Secret: i.reattach.Secret, Logger: i.log})
	rpc, err := client.Client()
	if err != nil {
		// Not retried in a loop: the process was started by hand and
		// CLAWHOST_REATTACH names that one process.
		return nil, nil, &runError{StateMissing, fmt.Errorf("attach to plugin %s (pid %d, %s): %w: start it again in debug mode and restart clawhost with the CLAWHOST_REATTACH it prints", i.spec.Instance, i.reattach.Pid, i.reattach.Addr, err)}
	}
	plug, err := pluginclient.Dispense(rpc)
	if err != nil {
		_ = rpc.Close()
		return nil, nil, fmt.Errorf("attach to plugin %s: %w", i.spec.Instance, err)
	}
	i.mu.Lock()
	i.pid = i.reattach.Pid
	i.mu.Unlock()
	i.log.Info("attached to a plugin started by hand (debug mode)", "pid", i.reattach.Pid)
	return &Process{client: client}, plug, nil
}
