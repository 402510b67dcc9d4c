package securityaudit

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/clawhost/clawhost/core/internal/bashrule"
	"github.com/clawhost/clawhost/core/internal/boundary"
)

// MinWebhookSecret is the shortest Telegram webhook secret not reported
// (the telegram plugin refuses shorter ones).
const MinWebhookSecret = 16

// maxFileFindings bounds the files of data_dir listed one by one.
const maxFileFindings = 10

// checks are every check, in the order they are written here.
var checks = []func(Input, Machine) []Finding{
	checkDMPolicy,
	checkOwners,
	checkAllowFromWildcards,
	checkGroupPolicy,
	checkGroupTriggers,
	checkGroupApprovers,
	checkAgentSettings,
	checkSandbox,
	checkBoundary,
	checkPermissions,
	checkListen,
	checkPins,
	checkPluginTools,
	checkDataDir,
	checkConfigFile,
	checkWebhookSecret,
	checkPostgresTLS,
	checkRoot,
}

func checkDMPolicy(in Input, _ Machine) []Finding {
	if in.Access.DMPolicy.Value != "open" {
		return nil
	}
	return []Finding{{Critical, "access.dm_policy_open", in.Access.DMPolicy.At,
		`dm_policy = "open": anyone who finds the bot talks to the agent, which runs tools as clawhost's user`,
		`set dm_policy = "pairing" (unknown senders get a code an owner approves) or "allowlist"`}}
}

func checkOwners(in Input, _ Machine) []Finding {
	if len(in.Access.Owners) > 0 {
		return nil
	}
	return []Finding{{Medium, "access.no_owners", in.Access.OwnersAt,
		"no owners: nobody may approve pairing codes, answer approvals or change a chat's policy from a chat; only the machine's shell can",
		`name yourself: owners = ["<instance>:<your id>"] (/whoami tells you your id)`}}
}

func checkAllowFromWildcards(in Input, _ Machine) []Finding {
	var out []Finding
	for _, e := range in.Access.AllowFrom {
		instance, id, ok := strings.Cut(e.Value, ":")
		if !ok || id != "*" {
			continue
		}
		p := in.plugin(instance)
		if p != nil && p.Local {
			if p.Token {
				continue
			}
			out = append(out, Finding{Low, "access.allow_from_wildcard_local", e.At,
				fmt.Sprintf("%q admits everyone who can open the %s chat (%s): every account on this machine", e.Value, instance, p.Listen.Value),
				"give the chat an access_token, keep the machine single-user, or list the senders instead of the wildcard"})
			continue
		}
		out = append(out, Finding{Critical, "access.allow_from_wildcard", e.At,
			fmt.Sprintf("%q admits every sender of %q, a channel reachable from outside this machine: as open as dm_policy = \"open\" there", e.Value, instance),
			fmt.Sprintf("list the senders (%q) or let them pair (dm_policy = \"pairing\")", instance+":<sender id>")})
	}
	return out
}

func checkGroupPolicy(in Input, _ Machine) []Finding {
	if in.Access.GroupPolicy.Value != "open" {
		return nil
	}
	return []Finding{{High, "access.group_policy_open", in.Access.GroupPolicy.At,
		`group_policy = "open": the agent answers in every group anyone adds the bot to`,
		`set group_policy = "allowlist" and list the groups in groups`}}
}

// groupsReachable reports whether the agent answers in some group.
func (in Input) groupsReachable() bool {
	switch in.Access.GroupPolicy.Value {
	case "open":
		return true
	case "disabled":
		return false
	}
	return len(in.Access.Groups) > 0
}

func (in Input) groupsAt() string {
	if in.Access.GroupPolicy.Value == "open" {
		return in.Access.GroupPolicy.At
	}
	return in.Access.GroupsAt
}

func checkGroupTriggers(in Input, _ Machine) []Finding {
	a := in.Access
	if !in.groupsReachable() || len(a.GroupAllowFrom) > 0 || a.GroupRulesWithAllowFrom > 0 || len(a.Owners) > 0 || len(a.Members) > 0 {
		return nil
	}
	return []Finding{{Medium, "access.group_triggers", in.groupsAt(),
		"groups are answered but nobody is named to trigger the agent there (no group_allow_from, owners or members): any member who mentions the bot runs it",
		"name who may trigger it: group_allow_from = [...] (or owners, members)"}}
}

func checkGroupApprovers(in Input, _ Machine) []Finding {
	ag := in.Agent
	if ag.Approvers.Value != "sender" || !in.groupsReachable() || (ag.Approvals.Value != "chat" && !ag.AskOffered) {
		return nil
	}
	return []Finding{{High, "agent.approvers_sender_in_groups", ag.Approvers.At,
		`approvers = "sender" with groups: whoever triggers the agent in a group approves its tool use (its shell commands) themselves`,
		`set approvers = "owners" (owners answer every approval question)`}}
}

// agents are the default agent and the agent "<id>" blocks.
func (in Input) agents() []Agent { return append([]Agent{in.Agent}, in.Agents...) }

// whose is how a finding names agent a's claude: "claude" for the default
// agent, `agent "ops"'s claude` for a named one.
func (a Agent) whose() string {
	if a.ID == "" {
		return "claude"
	}
	return fmt.Sprintf("agent %q's claude", a.ID)
}

// block is how a fix names a's block: agent or agent "ops".
func (a Agent) block() string {
	if a.ID == "" {
		return "agent"
	}
	return fmt.Sprintf("agent %q", a.ID)
}

func checkAgentSettings(in Input, _ Machine) []Finding {
	var out []Finding
	for _, a := range in.agents() {
		if a.Settings.Value == "user" {
			out = append(out, Finding{High, "agent.settings_user", a.Settings.At,
				a.whose() + " loads the operator's personal settings (~/.claude): their allow rules, hooks and MCP servers apply to every chat's turns",
				`set ` + a.block() + ` { settings = "project" } so only the bot's own settings apply`})
		}
	}
	return out
}

func checkSandbox(in Input, m Machine) []Finding {
	var out []Finding
	install := "apt install bubblewrap"
	if m.InstallBubblewrap != "" {
		install = m.InstallBubblewrap
	}
	for _, a := range in.agents() {
		if a.Sandbox.Value == "off" {
			out = append(out, Finding{Medium, "agent.sandbox_off", a.Sandbox.At,
				a.whose() + " runs without a sandbox: its tools see everything its user sees (the database, tokens, other chats' files)",
				`set ` + a.block() + ` { sandbox = "auto" } (needs bubblewrap: ` + install + `)`})
		}
	}
	if in.Agent.Sandbox.Value == "off" {
		return out
	}
	if m.LookPath == nil {
		return nil
	}
	if _, err := m.LookPath("bwrap"); err != nil {
		return append(out, Finding{Medium, "agent.sandbox_unavailable", "",
			"bubblewrap (bwrap) is not in PATH: claude cannot be sandboxed, so clawhost starts only while nobody but the owners can reach the agent, and then runs claude with all of clawhost's user's access",
			"install bubblewrap (" + install + ") and check that unprivileged user namespaces are allowed"})
	}
	return out
}

// bashRule is the content of an allowed_tools entry that is a Bash rule
// ("" for a bare "Bash"), or false for another tool's.
func bashRule(entry string) (string, bool) {
	entry = strings.TrimSpace(entry)
	if entry == "Bash" {
		return "", true
	}
	content, ok := strings.CutPrefix(entry, "Bash(")
	if !ok {
		return "", false
	}
	return strings.TrimSuffix(content, ")"), true
}

func checkPermissions(in Input, _ Machine) []Finding {
	var out []Finding
	for _, a := range in.agents() {
		out = append(out, checkAgentPermissions(a)...)
	}
	return out
}

func checkAgentPermissions(ag Agent) []Finding {
	var out []Finding
	who := "" // which agent, in a named block
	if ag.ID != "" {
		who = fmt.Sprintf("agent %q: ", ag.ID)
	}
	bypass := func(at, what string) {
		out = append(out, Finding{Critical, "agent.bypass_permissions", at,
			who + what + ": every tool use runs unasked, shell included, for whoever reaches the agent",
			`use permission_mode = "dontAsk" with a narrow allowed_tools, or "default" with approvals`})
	}
	if ag.PermissionMode.Value == "bypassPermissions" {
		bypass(ag.PermissionMode.At, `permission_mode = "bypassPermissions"`)
	}
	for _, m := range ag.PermissionModes {
		if m.Value == "bypassPermissions" {
			bypass(m.At, `permission_modes offers "bypassPermissions" to /mode`)
		}
	}
	for _, a := range ag.Args {
		if a.Value == "--dangerously-skip-permissions" {
			bypass(a.At, "args has --dangerously-skip-permissions")
		}
	}
	for _, t := range ag.AllowedTools {
		content, ok := bashRule(t.Value)
		if !ok {
			continue
		}
		why, instead := bashrule.Risk(content)
		switch prefix, _ := bashrule.Prefix(strings.TrimSpace(content)); {
		case why == "":
		case content == "" || prefix == "":
			out = append(out, Finding{High, "agent.allowed_tools_wide", t.At,
				fmt.Sprintf("%sallowed_tools has %q: every shell command runs unasked", who, t.Value),
				`allow the commands needed, e.g. "Bash(git log:*)", and leave the rest to permission_mode`})
		default:
			out = append(out, Finding{High, "agent.allowed_tools_runs_code", t.At,
				fmt.Sprintf("%sallowed_tools has %q: %s, unasked", who, t.Value, why), instead})
		}
	}
	return out
}

func checkListen(in Input, _ Machine) []Finding {
	var out []Finding
	if l := in.Admin.Listen; l.Value != "" && !in.Admin.Local {
		if in.Admin.TLS {
			out = append(out, Finding{Medium, "admin.listen_public", l.At,
				fmt.Sprintf("admin.listen = %q serves the status page and pairing approvals beyond this machine (with TLS)", l.Value),
				`keep it on 127.0.0.1 and reach it through an SSH tunnel, or restrict who can connect (firewall)`})
		} else {
			out = append(out, Finding{Critical, "admin.listen_public", l.At,
				fmt.Sprintf("admin.listen = %q serves the status page and pairing approvals beyond this machine, without TLS", l.Value),
				`set listen = "127.0.0.1:8791" (reach it through an SSH tunnel), or configure tls_cert and tls_key`})
		}
	}
	for _, p := range in.Plugins {
		if p.Enabled && p.Listen.Value != "" && !p.Local {
			out = append(out, Finding{High, "plugin.listen_public", p.Listen.At,
				fmt.Sprintf("plugin %q serves people on %q, beyond this machine, over plain HTTP: its token and every message cross the network in clear", p.Name, p.Listen.Value),
				"keep it on 127.0.0.1 behind a TLS reverse proxy"})
		}
	}
	return out
}

func checkPins(in Input, _ Machine) []Finding {
	var out []Finding
	for _, p := range in.Plugins {
		if p.Enabled && !p.Pinned {
			out = append(out, Finding{Info, "plugin.unpinned", p.At,
				fmt.Sprintf("plugin %q (%s) has no sha256: whatever binary is at its path is started", p.Name, p.Source),
				"pin it: sha256 = \"<sha256sum of the binary>\" in its block"})
		}
	}
	return out
}

func checkDataDir(in Input, _ Machine) []Finding {
	dir := in.DataDir
	if dir == "" {
		return nil
	}
	mode, ok := fileMode(dir)
	if !ok {
		return []Finding{{Info, "files.data_dir_missing", dir,
			"data_dir does not exist yet: clawhost creates it 0700 at the first start",
			"nothing to do; run the audit again after the first start"}}
	}
	var out []Finding
	if mode.Perm()&0o077 != 0 {
		sev := Medium
		if mode.Perm()&0o002 != 0 {
			sev = High
		}
		out = append(out, Finding{sev, "files.data_dir_mode", dir,
			fmt.Sprintf("data_dir is %04o: other accounts may list or enter it (it holds the database, the plugins' keys and every chat's files)", mode.Perm()),
			"chmod 700 " + dir})
	}
	var shown, more int
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		perm := info.Mode().Perm()
		if perm&0o077 == 0 {
			return nil
		}
		if shown == maxFileFindings {
			more++
			return nil
		}
		shown++
		sev, what := Medium, "readable by other accounts"
		switch {
		case perm&0o022 != 0:
			sev, what = High, "writable by other accounts"
		case perm&0o004 == 0 && perm&0o040 != 0:
			sev, what = Low, "readable by its group"
		}
		fix := "chmod go-rwx " + path
		if info.IsDir() {
			fix = "chmod 700 " + path
		}
		out = append(out, Finding{sev, "files.data_dir_file_mode", path,
			fmt.Sprintf("%s is %04o: %s", rel(dir, path), perm, what), fix})
		return nil
	})
	if more > 0 {
		out = append(out, Finding{Medium, "files.data_dir_file_mode", dir,
			fmt.Sprintf("%d more files in data_dir are open to other accounts", more),
			"chmod -R go-rwx " + dir})
	}
	return out
}

func checkConfigFile(in Input, _ Machine) []Finding {
	if len(in.LiteralSecrets) == 0 || in.ConfigPath == "" {
		return nil
	}
	mode, ok := fileMode(in.ConfigPath)
	if !ok {
		return nil
	}
	names := make([]string, 0, len(in.LiteralSecrets))
	for _, s := range in.LiteralSecrets {
		names = append(names, s.Value+" ("+s.At+")")
	}
	list := strings.Join(names, ", ")
	switch perm := mode.Perm(); {
	case perm&0o004 != 0:
		return []Finding{{High, "files.config_secrets_readable", in.ConfigPath,
			fmt.Sprintf("the config file is %04o, readable by every account, and holds secrets written out: %s", perm, list),
			"take them from the environment with env(\"NAME\"), or chmod 600 " + in.ConfigPath}}
	case perm&0o040 != 0:
		return []Finding{{Low, "files.config_secrets_readable", in.ConfigPath,
			fmt.Sprintf("the config file is %04o, readable by its group, and holds secrets written out: %s", perm, list),
			"take them from the environment with env(\"NAME\"), or chmod 600 " + in.ConfigPath}}
	}
	return nil
}

func checkWebhookSecret(in Input, _ Machine) []Finding {
	var out []Finding
	for _, p := range in.Plugins {
		s := p.WebhookSecret
		if !p.Enabled || s.Value == "" || len(s.Value) >= MinWebhookSecret {
			continue
		}
		out = append(out, Finding{Medium, "telegram.webhook_secret_short", s.At,
			fmt.Sprintf("plugin %q: webhook_secret has %d characters, few enough to guess: whoever finds the webhook could post forged updates", p.Name, len(s.Value)),
			fmt.Sprintf("use at least %d random characters, e.g. `openssl rand -hex 16`", MinWebhookSecret)})
	}
	return out
}

func checkPostgresTLS(in Input, _ Machine) []Finding {
	s := in.Storage
	if s.Engine != "postgres" || s.RemoteHost == "" {
		return nil
	}
	switch s.SSLMode {
	case "verify-full":
		return nil
	case "verify-ca":
		return []Finding{{Low, "storage.postgres_tls", s.At,
			fmt.Sprintf("the database %s is reached with sslmode=verify-ca: the certificate's chain is checked, not that it names %s", s.RemoteHost, s.RemoteHost),
			"use sslmode=verify-full"}}
	case "require":
		return []Finding{{Medium, "storage.postgres_tls", s.At,
			fmt.Sprintf("the database %s is reached with sslmode=require: encrypted, but any server can pose as it and read the password", s.RemoteHost),
			"use sslmode=verify-full (with sslrootcert= the server's CA unless the system trusts it)"}}
	}
	mode := s.SSLMode
	if mode == "" {
		mode = "unset (prefer)"
	}
	return []Finding{{High, "storage.postgres_tls", s.At,
		fmt.Sprintf("the database %s is not on this machine and sslmode is %s: the password and every message may cross the network in clear", s.RemoteHost, mode),
		"add sslmode=verify-full to the url"}}
}

// checkBoundary reports what the machine lacks for claude's boundary
// (Machine.Boundary): bubblewrap that cannot make a user namespace (one not
// installed is checkSandbox's), a kernel that loads no syscall filter, and
// Landlock missing or not in use.
func checkBoundary(in Input, m Machine) []Finding {
	v := m.Verdict()
	if v == nil || in.Agent.Sandbox.Value == "off" {
		return nil
	}
	var out []Finding
	for _, p := range v.Parts {
		switch {
		case p.Status == boundary.Holds:
		case p.Name == boundary.PartUserNamespace && !strings.Contains(v.Sandbox, "not installed"):
			out = append(out, Finding{Medium, "sandbox.user_namespace", "", p.Found + ": clawhost starts only while nobody but the owners can reach the agent, and then runs claude unsandboxed", p.Fix})
		case p.Name == boundary.PartSeccomp && v.Parts[0].Status == boundary.Holds:
			out = append(out, Finding{High, "sandbox.seccomp", "", p.Found, p.Fix})
		case p.Name == boundary.PartLandlock && p.Status == boundary.Weaker:
			out = append(out, Finding{Low, "sandbox.landlock", "", p.Found, p.Fix})
		}
	}
	return out
}

// checkRoot reports root without run_as. With the boundary holding, a claude
// run as root holds no capability in the host's user namespace: that is a
// pass, and what is left is the plugins, which run as root (medium). Where it
// does not hold, or was not probed, claude's tools run as root too (high).
func checkRoot(in Input, m Machine) []Finding {
	if m.UID != 0 {
		return nil
	}
	v := m.Verdict()
	holds := v != nil && v.Holds
	if in.Agent.RunAs.Value == "" {
		if holds && in.Agent.Sandbox.Value != "off" {
			return []Finding{{Medium, "process.root_without_run_as", "",
				"clawhost runs as root and no run_as is set: claude's boundary holds (as root it holds no capability in the host's user namespace), but every plugin runs as root",
				"run clawhost as an unprivileged user, or set agent { run_as = \"<user>\" } (the plugins run as it too)"}}
		}
		why := "claude's tools and every plugin run as root"
		if v != nil {
			why = "claude's boundary does not hold here (" + v.Summary() + "), so claude's tools run as root with root's capabilities, and every plugin runs as root"
		}
		return []Finding{{High, "process.root_without_run_as", "",
			"clawhost runs as root and no run_as is set: " + why,
			"run clawhost as an unprivileged user, or set agent { run_as = \"<user>\" }"}}
	}
	var out []Finding
	for _, a := range in.Agents {
		if a.RunAs.At != "" && a.RunAs.Value == "" && !(holds && a.Sandbox.Value != "off") {
			out = append(out, Finding{High, "process.root_without_run_as", a.RunAs.At,
				"clawhost runs as root and " + a.block() + " sets run_as = \"\": " + a.whose() + " and its tools run as root",
				"remove run_as from " + a.block() + " (it then runs as the default agent's user), or name another user"})
		}
	}
	return out
}

// plugin returns the plugin block of instance, or nil.
func (in Input) plugin(instance string) *Plugin {
	for i := range in.Plugins {
		if in.Plugins[i].Name == instance {
			return &in.Plugins[i]
		}
	}
	return nil
}
