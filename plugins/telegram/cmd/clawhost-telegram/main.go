// Command clawhost-telegram is clawhost's Telegram channel plugin. clawhost
// starts it; it is not meant to be run by hand. See package
// github.com/clawhost/clawhost/plugins/telegram for its configuration.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/telegram"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(telegram.Plugin())) }
