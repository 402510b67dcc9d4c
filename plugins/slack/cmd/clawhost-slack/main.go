// Command clawhost-slack is clawhost's Slack channel plugin. clawhost
// starts it; it is not meant to be run by hand. See package
// github.com/clawhost/clawhost/plugins/slack for its configuration.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/slack"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(slack.Plugin())) }
