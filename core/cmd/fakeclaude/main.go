// Command fakeclaude is the fake claude CLI as a binary of its own, for the
// load harness (a test tool: make build does not build it). A test binary
// acting as claude costs ~28 ms to start (tens of MB, every test package's
// init), this one a few ms, so the harness measures the host rather than
// its fake agent's starts.
package main

import "github.com/clawhost/clawhost/core/internal/fakeclaude"

func main() { fakeclaude.Main() }
