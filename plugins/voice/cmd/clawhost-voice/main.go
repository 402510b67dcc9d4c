// Command clawhost-voice is the voice plugin: voice notes transcribed for
// the agent, voice replies per chat (/voice). clawhost starts it; it is
// not meant to be run by hand.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/voice"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(voice.New())) }
