// Command clawhost-git is clawhost's git command plugin (/git). clawhost
// starts it; it is not meant to be run by hand. See package
// github.com/clawhost/clawhost/plugins/git for its configuration.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/git"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(git.Plugin())) }
