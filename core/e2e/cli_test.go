package e2e

import (
	"io"
	"strings"

	"github.com/clawhost/clawhost/core/cli"
)

// statusIndent is the indent of what `clawhost status` shows under a
// plugin that needs attention (core/cli's attentionIndent).
const statusIndent = "      "

// run runs the command line args in this process, as the binary does
// (core/cli), with an empty stdin.
func run(args []string, stdout, stderr io.Writer) int {
	return cli.Main(args, strings.NewReader(""), stdout, stderr)
}

// fetchStatus reads /status.json from the admin endpoint of the host cfg
// configures, with its admin token, as `clawhost status` does.
var fetchStatus = cli.FetchStatus
