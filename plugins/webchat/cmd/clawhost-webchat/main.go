// Command clawhost-webchat is the webchat channel plugin: a local chat page
// for clawhost that needs no platform account. clawhost starts it; it is
// not meant to be run by hand.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(webchat.Plugin())) }
