// Package cli is the clawhost command line: every subcommand (run, init,
// validate, pairing, status, plugin test, retry, security audit, service,
// version, help, and mcp-schedule, which the host starts for claude) as a
// library.
// Main parses the arguments and returns the exit code; the clawhost binary
// is Main with the process's arguments and streams.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/clawhost/clawhost/core/agenttools"
)

// command is one subcommand: how help lists it and what runs it (the shape
// of caddy's caddycmd). Commands that share a first word ("pairing list",
// "pairing approve") share what runs them.
type command struct {
	name    string // as typed: "validate", "pairing list"
	args    string // after the name: "[-config FILE]"
	summary string // one line
	detail  string // what `clawhost help NAME` adds; may be empty
	// run runs the command once the common flags (-config, -approved) are
	// parsed; it returns the exit code.
	run func(inv invocation) int
	// own, instead of run, runs a command that parses its own flags: it
	// gets the arguments after the command's first word.
	own func(args []string, stdout, stderr io.Writer) int
}

// invocation is a command line once the common flags are parsed.
type invocation struct {
	config         string   // -config
	admin          string   // -admin (status, pairing, retry, reload)
	approved       bool     // -approved (pairing list only)
	all            bool     // -all (validate only)
	probe          bool     // -probe (validate only)
	positional     []string // the arguments that are not flags
	stdout, stderr io.Writer
}

// commands are the subcommands, in the order help lists them (set by init:
// help reads the table it is in).
var commands []command

func init() { commands = commandTable() }

// commandTable is every subcommand with what runs it, in help's order.
func commandTable() []command {
	runServe := func(inv invocation) int { return serve(inv.config, inv.stderr) }
	runValidate := func(inv invocation) int { return validate(inv.config, inv.all, inv.probe, inv.stdout, inv.stderr) }
	runPairing := func(inv invocation) int {
		return pairing(inv.host(), inv.positional, inv.approved, inv.stdout, inv.stderr)
	}
	runStatus := func(inv invocation) int { return status(inv.host(), inv.stdout, inv.stderr) }
	runRetry := func(inv invocation) int { return retry(inv.host(), inv.positional, inv.stdout, inv.stderr) }
	runVersion := func(inv invocation) int {
		fmt.Fprintln(inv.stdout, thisBuild())
		return 0
	}
	runHelp := func(inv invocation) int { return help(inv.positional, inv.stdout, inv.stderr) }
	return append(append([]command{
		{"run", "[-config FILE]", "run the host (the default): start the enabled plugins and answer chats",
			"SIGHUP reloads the configuration: new and changed plugin blocks are checked by their\nplugins first; an invalid file is refused whole and the running set kept (clawhost status\nshows why); SIGINT and SIGTERM stop every plugin and claude process and exit.", runServe, nil},
		{"validate", "[-all] [-probe] [-config FILE]", "check the file and every enabled plugin's config block; exit 1 on errors",
			"Prints every problem in one list sorted by file:line:col, then the count: the file's own\nsettings, missing plugin binaries (with the nearest available source), and each plugin's\nconfig block checked against the schema the plugin declares and by the plugin's own checks\n(the plugin is started for it, unless an error is in what says how to start it: source,\npath, sha256, enabled, start_timeout). Disabled plugins are listed with what disables them;\n-all checks their config blocks too, as if they were enabled (a block that is off here because an\nenvironment variable is unset, but on where it runs). -probe also runs each enabled plugin's live\nchecks on its valid block (its token with its platform, a linked device): a failed check is an\nerror, a warning a warning. Exit 0 when valid (warnings allowed), 1 on errors, 2 on bad usage.", runValidate, nil},
		{"pairing list", "[-approved] [-config FILE]", "the pending pairing codes of unknown senders; -approved: the approved senders",
			"-approved lists each sender approved through pairing with when and by whom, and when the\napproval expires (access.pairing_ttl) or why it is not honoured (dm_policy = \"allowlist\").", runPairing, nil},
		{"pairing approve", "CODE [-config FILE]", "let the sender of CODE talk to the agent",
			"Goes through the running host's admin endpoint, or the database when clawhost is stopped.", runPairing, nil},
		{"pairing revoke", "INSTANCE:ID [-config FILE]", "withdraw a sender's approval and drop their schedules",
			"The sender (as /whoami shows it, e.g. tg:123456789) is asked to pair again; the schedules\nthat run in their direct chat (added with /schedule or by the agent) are removed. Entries\nin access.owners or access.allow_from stay: edit the file for those.", runPairing, nil},
		{"status", "[-config FILE]", "the running host's plugins: state, last error, what to do",
			"Reads the running host's admin endpoint (admin { listen = ... } in the file) with the token\nof <data_dir>/admin.token, and shows a\nrefused last reload with its diagnostics. Exit 0 when every plugin is ready, 1 when one is\nnot or the last reload was refused, 2 when the host cannot be reached. A plugin that needs\nattention is shown with what it asks for: a QR code drawn in the terminal, a code or a link,\nand its expiry.", runStatus, nil},
		{"channel", "-chat INSTANCE:ID [-config FILE]", "attach a terminal claude to an owner's chat (an MCP channel server claude starts)",
			channelHelp, nil, func([]string, io.Writer, io.Writer) int { return 2 }},
		{"plugin test", "[flags] PATH", "run the conformance checks against a plugin binary, in any language",
			"Launches PATH as the host does (handshake, minimal environment, its own process group) on\n" +
				"fresh processes and checks what every plugin owes the host: Describe, ConfigSchema,\n" +
				"Validate and Configure, WatchStatus, a clean exit on SIGTERM without warnings; then per\n" +
				"kind: a channel's inbound delivery, ack and redelivery, sends up to its declared limit and\n" +
				"its optional capabilities; a command plugin's command list and, with -exec, its answer to\n" +
				"a command; and:\n" +
				"  before_agent_start  a hook's answer (context for the turn)\n" +
				"  message_received    an answer to an ordinary message, the same for a repeated call\n" +
				"                      id; a drop says why; a note that replaces names its attachment\n" +
				"  message_sending     an answer to an ordinary reply, the same for a repeated call id;\n" +
				"                      no empty media\n" +
				"  agent_end           an answer to a finished turn, also to a repeated call id\n" +
				"  list_tools          valid names, descriptions, object input schemas\n" +
				"  call_tools          each tool called with arguments from its schema answers within\n" +
				"                      the timeout, alike for a repeated call id\n" +
				"A hook that answers its call with an error fails its check, and so does a tool plugin\n" +
				"whose every tool returns an error (a tool error, Result.IsError, is an answer):\n" +
				"one that answers only errors does nothing.\n" +
				"Each call runs within -timeout. One line per check; exit 0 when all pass (skips\n" +
				"allowed), 1 when one fails, 2 on bad usage.\n\n" +
				"Flags (before or after PATH):\n" +
				"  -config-json JSON|@FILE  the plugin's config {} block as JSON (default {}; the schema's\n" +
				"                           defaults are filled in)\n" +
				"  -inject CMD              shell command that makes the plugin's platform produce one\n" +
				"                           inbound message; it gets CLAWHOST_TEST_TEXT (and _JSON, the\n" +
				"                           text as a JSON string) and CLAWHOST_TEST_DATA_DIR (the plugin's\n" +
				"                           data dir and working directory) and may block until the\n" +
				"                           message is acked. Without it the inbound checks are skipped.\n" +
				"  -exec \"/CMD ARGS\"         a command line a command plugin's Execute runs; the answer\n" +
				"                           is checked (replies with text or a file, known formats,\n" +
				"                           files that exist, buttons a channel can carry). Without it\n" +
				"                           the execute check is skipped.\n" +
				"  -workdir DIR             the chat's directory the -exec command and the tool calls are\n" +
				"                           told (absolute), as the host tells them a chat's workspace or\n" +
				"                           worktree\n" +
				"  -timeout D               bound of each step (default 10s)\n" +
				"  -grace D                 how long the plugin may take to exit after SIGTERM (default 5s)\n" +
				"  -v                       show the plugin's log\n\n" +
				"Example, the loopback channel (its address is written to lo.addr in its data dir):\n" +
				"  clawhost plugin test -config-json '{\"addr_file\":\"lo.addr\"}' \\\n" +
				"    -inject 'curl -s --retry 5 -d \"{\\\"chat_id\\\":\\\"c1\\\",\\\"sender_id\\\":\\\"u1\\\",\\\"message_id\\\":\\\"$(date +%s%N)\\\",\\\"text\\\":$CLAWHOST_TEST_TEXT_JSON}\" \\\n" +
				"      http://$(cat lo.addr)/inbound' bin/clawhost-loopback\n" +
				"A command plugin: clawhost plugin test -exec '/ping hello' bin/clawhost-ping\n" +
				"The git plugin on a repository: clawhost plugin test -exec /git -workdir \"$PWD\" bin/clawhost-git", nil, pluginCommand},
		{"plugin schema", "[-json] SOURCE|PATH", "print the attributes a plugin's config {} block takes (the schema it declares)",
			"Starts the plugin as the host does, asks for its ConfigSchema and stops it. SOURCE is a\nplugin source as in plugin \"x\" { source = \"telegram\" } (the binary clawhost-telegram beside\nclawhost, or in ./bin); PATH names a binary. -json prints the schema as JSON.", nil, pluginCommand},
		{"plugin descriptor", "", "write the protocol's descriptor set (for plugins in other languages) to standard output",
			"clawhost plugin descriptor > clawhost.binpb: the google.protobuf.FileDescriptorSet of\nclawhost/v1 with its imports, from which a plugin in Python (or any language with a\nprotobuf runtime) builds its message classes; no checkout, Go or protoc needed.", nil, pluginCommand},
		{"plugin package", "[-o OUT] [-python PATH] DIR", "package a Python plugin (DIR with __main__.py) as one executable file",
			"Writes OUT (default ./clawhost-<DIR's name>, mode 0755): a zipapp, as python3 -m zipapp\n" +
				"makes it, of DIR's .py files and the protocol's descriptor set (" + PythonDescriptor + ", which\n" +
				"the plugin loads when $CLAWHOST_PROTO_DESCRIPTOR is unset). -python is the interpreter of its\n" +
				"#! line (default \"/usr/bin/env python3\"): one with grpcio and protobuf (Debian's\n" +
				"python3-grpcio and python3-protobuf). Put OUT in plugin_dir and check it with\n" +
				"clawhost plugin test OUT.\n" +
				"Example: clawhost plugin package -python /usr/bin/python3 -o bin/clawhost-echo examples/python-echo", nil, pluginCommand},
		{"plugin new", "[-dir DIR] [-sdk CHECKOUT] go|python channel|hook|tool NAME", "write a plugin that builds and passes plugin test as written",
			"Writes DIR, which must not exist: a channel (its platform a spool directory, as\n" +
				"examples/channel-template), a message_sending hook that redacts a word, or a tool plugin\n" +
				"offering the tool NAME.\n" +
				"go: DIR (default ./clawhost-NAME) holds main.go and go.mod. Until the sdk is tagged, -sdk\n" +
				"names a clawhost checkout that go.mod points the sdk at. Then: cd DIR && go mod tidy &&\n" +
				"go build && clawhost plugin test ./clawhost-NAME.\n" +
				"python: DIR (default ./NAME) holds __main__.py and clawhost_plugin.py, the runtime. Then:\n" +
				"clawhost plugin package -python /usr/bin/python3 DIR && clawhost plugin test ./clawhost-NAME\n" +
				"(an interpreter with grpcio and protobuf: Debian's python3-grpcio and python3-protobuf).\n" +
				"A channel is tested with the inbox's -inject command, which plugin new prints:\n" +
				"  clawhost plugin test -inject '" + spoolInject + "' ./clawhost-NAME", nil, pluginCommand},
		{"retry", "INSTANCE [-config FILE]", "call the retry a plugin that needs attention offers (\"Show a new QR code\")",
			"What the status page's button does, through the running host's admin endpoint. Exit 0 when\nthe plugin took the request (clawhost status shows its next report), 1 when the instance is\nunknown, offers no retry or refused it, 2 when the host cannot be reached.", runRetry, nil},
		{"security audit", "[-config FILE] [-json]", "list the risky settings of the file and the machine, with what to change",
			"Reads the configuration (without starting anything) and the machine: who may reach the agent\n" +
				"(dm_policy, allow_from wildcards, groups, owners), who approves tool use, the agent's\n" +
				"permissions, settings and sandbox (bubblewrap in PATH), endpoints beyond loopback, unpinned\n" +
				"plugins, data_dir and config file permissions, the Telegram webhook secret, PostgreSQL TLS,\n" +
				"running as root. First it says whether claude's boundary holds on this machine: a user\n" +
				"namespace of its own (bubblewrap), the syscall filter (seccomp), Landlock, each with the fix\n" +
				"for what is missing. Each finding has a severity (critical, high, medium, low, info), the\n" +
				"file:line or path, what was found and what to change; -json prints them for machines.\n" +
				"Exit 0 when nothing is high or critical, 1 otherwise, 2 on bad usage or a file that does not\n" +
				"load. An empty report is not a guarantee: it checks settings, not the code behind them.", nil, securityCommand},
		{"doctor", "[-config FILE] [-json]", "check what the configuration needs of this machine, with what to do",
			"Without starting the host: each agent's claude CLI (found, its version against the tested\n" +
				"one, logged in — claude auth status — and answering one minimal real request), data_dir and the workspaces (there,\n" +
				"writable, data_dir private), free disk, the database (opens and migrates; held by a running host\n" +
				"is fine), each enabled plugin's binary, checksum and release (warned when it is another\n" +
				"install.sh release's than clawhost's), the admin endpoint's and web chats' ports\n" +
				"(free, or answering when clawhost runs), claude's sandbox and its boundary (user namespace,\n" +
				"seccomp, Landlock), and memory for agent.max_warm warm claude processes.\n" +
				"One line per check: ok, WARN or FAIL with what was found and what to do; -json for machines.\n" +
				"Exit 0 when nothing fails, 1 otherwise (or when the file does not load: -json then prints one\n" +
				"failing check, configuration, with the file's errors), 2 on bad usage.", nil, doctorCommand},
		{"reload", "[-config FILE]", "reload the running host's configuration file (as SIGHUP) and say what came of it",
			"Goes through the running host's admin endpoint; the host reads clawhost.env beside the file again\n" +
				"first. Prints \"applied\" and exactly the settings that changed (agent.model, access.owners,\n" +
				"plugin \"tg\"): those that apply from the next message or turn (warm claude processes included),\n" +
				"then those that wait for a restart of clawhost (an agent's command, workspace, sandbox, run_as;\n" +
				"storage, admin, data_dir, plugin_dir, log settings); or \"refused\" with the diagnostics (the\n" +
				"running set is kept). Exit 0 applied, 1 refused, 2 when the host cannot be reached.", reloadCommand, nil},
		{"healthcheck", "[-config FILE]", "exit 0 when the running host's /healthz answers 200 (every enabled plugin ready, one a channel), else 1",
			"For a container's HEALTHCHECK or a supervisor: GET /healthz on the admin endpoint (admin { listen }\n" +
				"in the file, or data_dir/admin.json when the file does not load). Nothing is printed when\n" +
				"healthy; otherwise the answer or the error goes to stderr.", healthcheckCommand, nil},
		{"owner-code", "[-config FILE]", "make a one-time code whose sender becomes an owner (\"/owner CODE\" in a direct chat)",
			"Writes a new owner claim to data_dir (replacing a pending one) and prints the message to send the\n" +
				"bot: its sender is added to the owners (data_dir/owners.json), running host or not. The code\n" +
				"is valid 24 hours and burned after 5 wrong tries. A host with no owner makes one at its start\n" +
				"and logs it (a container's first start). Exit 0, 1 when the file does not load or data_dir\n" +
				"cannot be written.", ownerCodeCommand, nil},
		{"mcp-approve", "[-config FILE] [AGENT]", "let an agent's claude load its workspace's .mcp.json as the file is now",
			"claude runs with --strict-mcp-config: a workspace's .mcp.json starts nothing until an owner approves\n" +
				"it. This records the file's sha256 and its servers for AGENT (default main), with who and when,\n" +
				"in data_dir/mcp-approvals.json (0600); the agent's next claude process loads exactly those bytes.\n" +
				"A changed file is left out (logged) until it is approved again. A server named \"clawhost\" is\n" +
				"refused. Exit 0, 1 when the file is missing or not an MCP config, 2 for an unknown agent.", mcpApproveCommand, nil},
		{"usage", "[-config FILE] [-since 7d] [-by person|chat|agent|day] [-json]", "what turns cost, summed by person, chat, agent or day",
			"Reads the usage ledger (one row per finished turn: who, which chat and agent, tokens and cost\n" +
				"as claude reports them) from the database, whether clawhost is running or not. -since is how\n" +
				"far back (default 7d); -by groups the rows (default person: the sender whose message started\n" +
				"the turn, or schedule:NAME / heartbeat); -json prints the rows for machines. Exit 0, 1 when the\n" +
				"database cannot be read, 2 on bad usage.", nil, usageCommand},
		{"audit", "[-config FILE] [-since 7d] [-kind KIND] [-json]", "the audit trail: who approved, refused or changed what, newest first",
			"Reads the audit trail from the database: pairing approvals and refusals, revocations, tool-use\n" +
				"decisions (tool, input digest, decision, by whom, in which chat), role-gated commands, budget\n" +
				"refusals and warnings, senders over access.rate, configuration reloads. Rows are kept for\n" +
				"audit { keep } (default 90d). -kind keeps one kind; -json prints them for machines. Exit 0, 1\n" +
				"when the database cannot be read, 2 on bad usage.", nil, auditCommand},
		{"sessions", "[-config FILE] [-since 7d] [-json]", "each chat's claude session, with the command that opens it in a terminal",
			"Reads the sessions from the database, whether clawhost is running or not: per chat its\n" +
				"/name or claude's title, turns, last use, whether agent.owner_claude_dir holds the chat's\n" +
				"latest transcript (\"up to date\"; \"no\" or \"behind\": /desktop in the chat copies it;\n" +
				"\"diverged\": the terminal went on with it too), and the command /desktop answers:\n" +
				"cd WORKSPACE && [CLAUDE_CONFIG_DIR=DIR] claude --resume ID. Nothing is written. -since keeps\n" +
				"the sessions used that recently; -json prints them for machines. Exit 0, 1 when the\n" +
				"database cannot be read, 2 on bad usage. docs/continue.md.", nil, sessionsCommand},
	}, setupCommands()...), []command{
		{"version", "", "print the version, commit, build date and the store schema versions this binary knows", "", runVersion, nil},
		{"help", "[COMMAND]", "print the commands and flags, or one command's usage", "", runHelp, nil},
	}...)
}

// configFlagUsage is the one flag, as help shows it.
const configFlagUsage = "configuration file; relative paths in it are relative to its directory"

// writeUsage writes every command with its one line, then the flags.
func writeUsage(w io.Writer) {
	fmt.Fprintln(w, "Usage: clawhost [COMMAND] [-config FILE]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name)+1+len(c.args))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, strings.TrimSpace(c.name+" "+c.args), c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Flags:")
	fmt.Fprintf(w, "  -config FILE  %s (default: %s\n", configFlagUsage, "$XDG_CONFIG_HOME/clawhost/config.hcl if it exists, else ./config.hcl)")
	fmt.Fprintln(w, "               clawhost.env beside the file sets the variables the environment does not")
	fmt.Fprintln(w, "  -admin ADDR   status, pairing, retry, reload: reach the running host's admin endpoint at ADDR")
	fmt.Fprintln(w, "                (when the file does not load, it is found from data_dir/admin.json without it)")
	fmt.Fprintln(w, "  -h, -help     print this help")
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "clawhost help COMMAND" for more about one command.`)
}

// parseFlags parses a command's args with fs. On -h it prints the help of
// the command named by topic and returns help's exit code; on a bad flag,
// after the flag package's message, it prints usage (unless "") and
// returns 2. ok is whether the command goes on.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer, topic ...string) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		return help(topic, stdout, stderr), false
	}
	if usage != "" {
		fmt.Fprintln(stderr, usage)
	}
	return 2, false
}

// extraArg reports an argument left after the flags of a command that
// takes none, with the command's usage, and whether there was one.
func extraArg(fs *flag.FlagSet, usage string, stderr io.Writer) bool {
	if fs.NArg() == 0 {
		return false
	}
	fmt.Fprintf(stderr, "%s: unexpected argument %q\n%s\n", fs.Name(), fs.Arg(0), usage)
	return true
}

// help is `clawhost help [COMMAND]`: the named command's usage and detail
// (every command starting with the name: "pairing" gives both), then the
// full list. An unknown name is a usage error.
func help(topic []string, stdout, stderr io.Writer) int {
	name := strings.Join(topic, " ")
	if name == "" {
		writeUsage(stdout)
		return 0
	}
	var found []command
	for _, c := range commands {
		if c.name == name || strings.HasPrefix(c.name, name+" ") {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		fmt.Fprintf(stderr, "clawhost help: unknown command %q\n\n", name)
		writeUsage(stderr)
		return 2
	}
	for _, c := range found {
		fmt.Fprintf(stdout, "clawhost %s\n    %s\n", strings.TrimSpace(c.name+" "+c.args), c.summary)
		if c.detail != "" {
			fmt.Fprintf(stdout, "\n%s\n", c.detail)
		}
		if flags := ownFlags[c.name]; flags != nil {
			fs := flags()
			fmt.Fprintln(stdout, "\nFlags:")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		fmt.Fprintln(stdout)
	}
	writeUsage(stdout)
	return 0
}

// ownFlags are the flag sets of commands whose flags are many, by
// command name: help lists every flag from the set the command parses,
// so a new flag is never missing from it.
var ownFlags = map[string]func() *flag.FlagSet{"init": func() *flag.FlagSet { fs, _ := initFlagSet(); return fs }}

// lookup returns the command whose first word is cmd.
func lookup(cmd string) (command, bool) {
	for _, c := range commands {
		if c.name == cmd || strings.HasPrefix(c.name, cmd+" ") {
			return c, true
		}
	}
	return command{}, false
}

// Main runs the clawhost command line args (without the program name) and
// returns the process's exit code: 0 on success, 1 when the command failed,
// 2 on bad usage (each command's help says more). stdin is read only by
// mcp-schedule.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	if cmd == "mcp-schedule" { // started by the host for claude, not by people
		return agenttools.ServeMCP(Version, os.Getenv, stdin, stdout, stderr)
	}
	if cmd == "channel" { // started by a terminal claude: its stdin is the MCP session
		return channelCmd(args, stdin, stdout, stderr)
	}
	c, ok := lookup(cmd)
	if !ok {
		fmt.Fprintf(stderr, "clawhost: unknown command %q\n\n", cmd)
		writeUsage(stderr)
		return 2
	}
	if c.own != nil {
		return c.own(args, stdout, stderr)
	}
	inv, code, ok := parseCommon(cmd, args, stdout, stderr)
	if !ok {
		return code
	}
	return c.run(inv)
}

// parseCommon parses the flags every command but plugin and security
// takes (-config, -approved), before or after the positional arguments.
// When ok is false the command line was a request for help or wrong, and
// code is the exit code (help has been written).
func parseCommon(cmd string, args []string, stdout, stderr io.Writer) (inv invocation, code int, ok bool) {
	fs := flag.NewFlagSet("clawhost "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // help is written below, once
	cfgPath := fs.String("config", defaultConfig(), configFlagUsage)
	approved := fs.Bool("approved", false, "pairing list: the approved senders instead of the pending codes")
	all := fs.Bool("all", false, "validate: check the config blocks of disabled plugins too")
	live := fs.Bool("probe", false, "validate: run each enabled plugin's live checks too (its credentials with its platform)")
	adminAddr := fs.String("admin", "", "status, pairing, retry, reload: the running host's admin endpoint (host:port), when the configuration file does not say it (or does not load)")
	var positional []string
	for len(args) > 0 && !isFlag(args[0]) {
		positional, args = append(positional, args[0]), args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if cmd == "run" || cmd == "help" {
				return inv, help(nil, stdout, stderr), false
			}
			return inv, help([]string{cmd}, stdout, stderr), false
		}
		// The flag package has said what is wrong.
		fmt.Fprintln(stderr)
		writeUsage(stderr)
		return inv, 2, false
	}
	positional = append(positional, fs.Args()...)
	if *approved && cmd != "pairing" {
		fmt.Fprintln(stderr, "clawhost: -approved goes with pairing list")
		return inv, 2, false
	}
	if *all && cmd != "validate" {
		fmt.Fprintln(stderr, "clawhost: -all goes with validate")
		return inv, 2, false
	}
	if *live && cmd != "validate" {
		fmt.Fprintln(stderr, "clawhost: -probe goes with validate")
		return inv, 2, false
	}
	if *adminAddr != "" && cmd != "status" && cmd != "pairing" && cmd != "retry" && cmd != "reload" && cmd != "healthcheck" {
		fmt.Fprintln(stderr, "clawhost: -admin goes with status, pairing, retry, reload and healthcheck")
		return inv, 2, false
	}
	return invocation{config: *cfgPath, admin: *adminAddr, approved: *approved, all: *all, probe: *live, positional: positional, stdout: stdout, stderr: stderr}, 0, true
}

func isFlag(s string) bool { return len(s) > 0 && s[0] == '-' }

// setupCommands are the commands that set clawhost up on a machine: init
// and the service.
func setupCommands() []command {
	return []command{
		{"init", "[-non-interactive] [flags]", "set clawhost up: channels with their tokens checked, workspace, owner; writes ~/.config/clawhost",
			"Asks which channels to set up (telegram, discord, whatsapp, webchat), the bot tokens (checked\n" +
				"live by the channel's plugin: who the bot is, Discord's Message Content intent; a wrong token is asked\n" +
				"again) and the workspace (default ~/clawhost-workspace, created). Writes config.hcl and\n" +
				"clawhost.env (the tokens, 0600) to $XDG_CONFIG_HOME/clawhost (~/.config/clawhost), with data_dir\n" +
				"$XDG_STATE_HOME/clawhost (~/.local/state/clawhost), and prints a one-time owner code: send\n" +
				"/owner CODE to the bot within 24 hours and you are its owner. An existing file is replaced only\n" +
				"when you say so (-force without a terminal). The flags, below, set what it would ask.\n" +
				"Exit 0 when written, 1 on a refused token or an existing file, 2 on bad usage.", nil, initCommand},
		{"service install", "[-config FILE] [-user|-system] [-run-as USER] [-dir DIR] [-no-start] [-force]", "run clawhost as a service: a systemd unit (Linux) or launchd agent (macOS)",
			"Writes a systemd unit running `clawhost run -config FILE` (FILE made absolute; without -config\n" +
				"$XDG_CONFIG_HOME/clawhost/config.hcl when it exists, else ./config.hcl) and starts it:\n" +
				"systemctl [--user] daemon-reload, enable --now. A user unit (~/.config/systemd/user) unless run\n" +
				"as root, which writes a system unit (/etc/systemd/system) running as the account clawhost,\n" +
				"created when missing; -user and -system force one. The unit reads clawhost.env beside the\n" +
				"configuration, has the PATH that finds the claude CLI here now, restarts on failure, logs to the\n" +
				"journal and is hardened without breaking claude (docs/service.md). On macOS: a launchd agent,\n" +
				"~/Library/LaunchAgents/dev.clawhost.plist, loaded with launchctl bootstrap gui/<uid>.\n" +
				"A system unit is checked first: when its account could not read the configuration and\n" +
				"clawhost.env, run clawhost and claude, or write data_dir and the workspaces, nothing is\n" +
				"written and the paths and the fix are printed; -run-as USER runs it as that existing\n" +
				"account instead (e.g. root, after clawhost init as root).\n" +
				"A different installed file is kept unless -force (the difference is shown); -no-start only\n" +
				"writes it; -dir puts it elsewhere. Exit 0 when installed (and started), 1 otherwise, 2 on bad usage.", nil, serviceCommand},
		{"service uninstall", "[-user|-system] [-dir DIR]", "stop and disable the service and remove its file",
			"systemctl [--user] disable --now, the file removed, daemon-reload (launchctl bootout on macOS).\n" +
				"The system account and the data stay.", nil, serviceCommand},
		{"service status", "[-config FILE] [-user|-system] [-dir DIR] [-json]", "whether the service is installed, up to date, enabled and running",
			"The unit file (and whether it is what install would write now), systemctl is-enabled and\n" +
				"is-active (launchctl print on macOS), and the command that shows its log. Exit 0 when it runs,\n" +
				"1 when it is not installed or not running, 2 on bad usage.", nil, serviceCommand},
		{"service logs", "[-user|-system] [-f]", "the service's log: its last 200 lines, -f to follow",
			"journalctl [--user] -u clawhost -n 200 (and -f); on macOS the launchd agent's log file\n" +
				"(tail). Exit 0, 1 when the log command fails.", nil, serviceCommand},
	}
}
