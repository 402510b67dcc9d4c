// Command clawhost-mcp-channel is clawhost's bridge to Claude Code channel
// servers: plugin "x" { source = "mcp-channel" } runs one as its child and
// makes it a clawhost channel. clawhost starts it; it is not meant to be
// run by hand. See package github.com/clawhost/clawhost/plugins/mcpchannel.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/mcpchannel"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(mcpchannel.Plugin())) }
