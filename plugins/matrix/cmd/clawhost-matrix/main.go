// Command clawhost-matrix is clawhost's Matrix channel plugin. clawhost
// starts it; it is not meant to be run by hand. See package
// github.com/clawhost/clawhost/plugins/matrix for its configuration.
package main

import (
	"os"

	"github.com/clawhost/clawhost/plugins/matrix"
	"github.com/clawhost/clawhost/sdk"
)

func main() { os.Exit(sdk.Serve(matrix.Plugin())) }
