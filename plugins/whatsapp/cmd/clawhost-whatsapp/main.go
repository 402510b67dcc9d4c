// Command clawhost-whatsapp is clawhost's WhatsApp channel plugin. clawhost
// starts it; it is not meant to be run by hand. See package
// github.com/clawhost/clawhost/plugins/whatsapp for its configuration.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/whatsapp"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(whatsapp.Plugin())) }
