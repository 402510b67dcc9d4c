// Command clawhost-sandbox is the sandbox helper alone: the init of a recycled sandbox
// (core/sandbox), which clawhost starts inside bubblewrap when it finds this
// binary beside its own. It is clawhost's helper without the rest of clawhost: fewer
// packages to initialise at each sandbox's start and less memory per sandbox.
package main

import (
	"fmt"
	"os"

	"github.com/clawhost/clawhost/core/sandbox/helper"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != helper.Arg {
		fmt.Fprintln(os.Stderr, "clawhost-sandbox is started by clawhost, inside bubblewrap")
		os.Exit(2)
	}
	os.Exit(helper.Main())
}
