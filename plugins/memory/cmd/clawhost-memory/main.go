// Command clawhost-memory is the memory tool plugin: it gives the agent a
// ranked full-text search over its MEMORY.md and memory/*.md. clawhost
// starts it; it is not meant to be run by hand.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/memory"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(memory.Plugin())) }
