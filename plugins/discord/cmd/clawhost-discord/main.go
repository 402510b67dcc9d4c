// Command clawhost-discord is clawhost's Discord channel plugin. clawhost
// starts it; it is not meant to be run by hand. See package
// github.com/clawhost/clawhost/plugins/discord for its configuration.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/discord"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(discord.Plugin())) }
