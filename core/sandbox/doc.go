// Package sandbox is where claude runs: the launchers the runner starts each claude
// through (Direct, no sandbox; PerStart, a bubblewrap per start; Pool, an agent's recycled
// sandboxes, each kept by a sandbox helper that is the init of its pid namespace), the
// mount policy every sandboxed start gets (SpecFor: what is writable, read-only, hidden),
// and the probe of what the machine allows. The helper itself, which clawhost-sandbox runs
// inside bubblewrap, is core/sandbox/helper.
package sandbox
