// Command clawhost is the clawhost daemon: it loads config.hcl, starts and
// supervises the configured plugins, and connects their chats to the Claude
// Code CLI.
//
//	clawhost [run] [-config FILE]      run (default ./config.hcl)
//	clawhost validate [-config FILE]   check the configuration, plugins included
//	clawhost pairing list [-approved]|approve CODE|revoke INSTANCE:ID [-config FILE]
//	                                   pending pairing codes (or the approved
//	                                   senders); approve one; revoke a sender
//	clawhost status [-config FILE]     the running host's plugins: state, error, what to do
//	clawhost plugin test [flags] PATH  the conformance checks against a plugin binary
//	clawhost security audit [-config FILE] [-json]
//	                                   the risky settings of the file and the machine
//	clawhost retry INSTANCE [-config FILE]
//	                                   call the retry a plugin that needs attention offers
//	clawhost version                   print the version, commit, build date and
//	                                   the store schema versions
//	clawhost help [COMMAND]            the commands and flags
//
// SIGINT and SIGTERM stop gracefully; SIGHUP reloads the configuration.
// The commands are package core/cli.
package main

import (
	"fmt"
	"os"

	"github.com/clawhost/clawhost/core/cli"
	"github.com/clawhost/clawhost/core/sandbox"
	"github.com/clawhost/clawhost/core/sandbox/helper"
	"github.com/clawhost/clawhost/sdk/nodump"
)

// version, commit and date are set at build time (make build, make dist)
// with -ldflags "-X main.version=... -X main.commit=... -X main.date=...";
// unset, clawhost version reads Go's build information instead.
var (
	version = "dev"
	commit  = ""
	date    = ""
)

func main() {
	if len(os.Args) >= 2 && os.Args[1] == helper.Arg {
		// The sandbox helper (core/sandbox): the init of an agent's sandbox,
		// started by the host inside bubblewrap; none of the CLI's start.
		os.Exit(helper.Main())
	}
	sandbox.EnableSandboxHelper() // this binary is the helper: recycled sandboxes by default
	// Before anything reads a secret: other processes of clawhost's user
	// (the tools claude runs) cannot read its environment or memory.
	if err := nodump.Set(); err != nil {
		fmt.Fprintf(os.Stderr, "clawhost: warning: prctl(PR_SET_DUMPABLE, 0): %v\n", err)
	}
	cli.Version, cli.Commit, cli.BuildDate = version, commit, date
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
