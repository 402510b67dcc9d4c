// Package configaudit maps a loaded configuration onto what `clawhost
// security audit` checks (core/securityaudit's Input), each value with the
// file:line that sets it, and runs the audit (Run).
package configaudit

import (
	"regexp"
	"slices"
	"sort"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginprobe"
	"github.com/clawhost/clawhost/core/redact"
	"github.com/clawhost/clawhost/core/securityaudit"
)

// secretAttrRe matches config attribute names that hold secrets, for
// finding secrets written out in the file without the plugins' schemas.
var secretAttrRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(token|secret|password|passwd|api_?key|private_?key|credential)`)
})

// auditInput maps a loaded configuration onto what `clawhost security
// audit` checks, with the file:line of each value the file sets; declared
// is what its plugins declare of themselves (pluginprobe.Declarations:
// the address each serves people on).
func auditInput(cfg *config.Config, declared map[string]pluginprobe.Declared) securityaudit.Input {
	a, ag := cfg.Access, cfg.Agent
	in := securityaudit.Input{
		ConfigPath: cfg.Path(),
		DataDir:    cfg.DataDir,
		Access: securityaudit.Access{
			DMPolicy:       setting(cfg, a.DMPolicy, "access", "dm_policy"),
			Owners:         a.Owners,
			OwnersAt:       at(cfg, "access", "owners"),
			Members:        a.Members,
			AllowFrom:      elems(cfg, a.AllowFrom, "access", "allow_from"),
			GroupPolicy:    setting(cfg, a.GroupPolicy, "access", "group_policy"),
			Groups:         append([]string(nil), a.Groups...),
			GroupsAt:       at(cfg, "access", "groups"),
			GroupAllowFrom: a.GroupAllowFrom,
		},
		Agent: securityaudit.Agent{
			PermissionMode:  setting(cfg, ag.PermissionMode, "agent", "permission_mode"),
			PermissionModes: elems(cfg, ag.PermissionModes, "agent", "permission_modes"),
			AllowedTools:    elems(cfg, ag.AllowedTools, "agent", "allowed_tools"),
			Args:            elems(cfg, ag.Args, "agent", "args"),
			Approvals:       setting(cfg, ag.Approvals, "agent", "approvals"),
			AskOffered:      askOffered(cfg),
			Approvers:       setting(cfg, ag.Approvers, "agent", "approvers"),
			Settings:        agentSettings(cfg),
			Sandbox:         agentSandbox(cfg),
			RunAs:           agentRunAs(cfg),
		},
		Admin: securityaudit.Admin{
			Listen: setting(cfg, cfg.Admin.Listen, "admin", "listen"),
			TLS:    adminTLS(cfg),
			Local:  config.IsLoopbackListen(cfg.Admin.Listen),
		},
		Storage:        auditStorage(cfg),
		LiteralSecrets: literalSecrets(cfg),
	}
	for _, n := range cfg.Agents {
		in.Agents = append(in.Agents, namedAgentAudit(cfg, n))
	}
	in.ToolGrants = toolGrants(cfg)
	for _, g := range a.GroupRules {
		in.Access.Groups = append(in.Access.Groups, g.ID)
		if len(g.AllowFrom) > 0 {
			in.Access.GroupRulesWithAllowFrom++
		}
	}
	if in.Access.GroupsAt == "" && len(a.GroupRules) > 0 {
		in.Access.GroupsAt = at(cfg, "access", "group", a.GroupRules[0].ID, "allow_from")
	}
	for _, p := range cfg.Plugins {
		// By convention a plugin's webhook_secret authenticates the
		// platform's webhook calls: audited for length, whatever the plugin.
		ap := securityaudit.Plugin{Name: p.Name, Source: p.Source, At: config.Position(p.DefRange), Enabled: p.Enabled, Pinned: p.SHA256 != "",
			WebhookSecret: pluginSetting(cfg, p, "webhook_secret")}
		// The address the plugin declares it serves people on (its
		// schema marks the attribute), and whether it asks them for a
		// token there.
		if d := declared[p.Name]; d.Listen != "" {
			addr, at := d.ListenOf(cfg, p)
			ap.Listen = securityaudit.Setting{Value: addr, At: at}
			ap.Local = config.IsLoopbackListen(addr)
			ap.Token = d.ListenToken
		}
		in.Plugins = append(in.Plugins, ap)
	}
	return in
}

// namedAgentAudit is what agent "<id>" block n writes itself of what the
// audit checks; what it inherits is the default agent's, audited there.
func namedAgentAudit(cfg *config.Config, n *config.Agent) securityaudit.Agent {
	own := func(v string, name string) securityaudit.Setting {
		a := n.Attribute(name)
		if a == nil {
			return securityaudit.Setting{}
		}
		return securityaudit.Setting{Value: v, At: config.Position(a.Expr.Range())}
	}
	ownElems := func(v []string, name string) []securityaudit.Setting {
		a := n.Attribute(name)
		if a == nil {
			return nil
		}
		return elemsOf(a, v)
	}
	return securityaudit.Agent{ID: n.ID,
		PermissionMode: own(n.PermissionMode, "permission_mode"), PermissionModes: ownElems(n.PermissionModes, "permission_modes"),
		AllowedTools: ownElems(n.AllowedTools, "allowed_tools"), Args: ownElems(n.Args, "args"),
		Settings: own(n.Settings, "settings"), Sandbox: own(n.Sandbox, "sandbox"), RunAs: own(n.RunAs, "run_as"),
	}
}

// toolGrants are each agent's tools (a named agent's own, or what it
// inherits from the default agent's block), each at its line.
func toolGrants(cfg *config.Config) []securityaudit.ToolGrant {
	def := elems(cfg, cfg.Agent.Tools, "agent", "tools")
	out := []securityaudit.ToolGrant{{Tools: def}}
	for _, n := range cfg.Agents {
		g := securityaudit.ToolGrant{Agent: n.ID, Tools: def}
		if a := n.Attribute("tools"); a != nil {
			g.Tools = elemsOf(a, n.Tools)
		}
		out = append(out, g)
	}
	return out
}

// Run runs `clawhost security audit` over cfg on machine m; declared is
// what cfg's plugins declare of themselves (pluginprobe.Declarations over
// all its plugin blocks; a plugin missing from it is audited by its block
// alone).
func Run(cfg *config.Config, m securityaudit.Machine, declared map[string]pluginprobe.Declared) []securityaudit.Finding {
	return securityaudit.Run(auditInput(cfg, declared), m)
}

// The accessors below read settings other changes add to the file
// (agent.settings, agent.sandbox, agent.run_as, admin.tls_cert) from the
// file as written; absent, they give what clawhost does without them.

// agentSettings is agent.settings: without it claude is started with no
// --setting-sources and loads the operator's user settings.
func agentSettings(cfg *config.Config) securityaudit.Setting {
	return setting(cfg, cfg.Agent.Settings, "agent", "settings")
}

// agentSandbox is agent.sandbox: without it claude runs unsandboxed.
func agentSandbox(cfg *config.Config) securityaudit.Setting {
	return setting(cfg, cfg.Agent.Sandbox, "agent", "sandbox")
}

// agentRunAs is agent.run_as: without it everything runs as clawhost's
// user.
func agentRunAs(cfg *config.Config) securityaudit.Setting {
	return setting(cfg, cfg.Agent.RunAs, "agent", "run_as")
}

// adminTLS is whether the admin endpoint serves TLS (admin.tls_cert).
func adminTLS(cfg *config.Config) bool {
	return cfg.Admin.TLSCert != "" && cfg.Admin.TLSKey != ""
}

// askOffered is whether an owner may turn approvals on for a chat with
// /mode ask: only where agent.permission_modes lists it.
func askOffered(cfg *config.Config) bool {
	return slices.Contains(cfg.Agent.PermissionModes, config.ModeAsk)
}

// fileSetting is the string attribute at path as the file writes it, or
// def when it is absent.
func fileSetting(cfg *config.Config, def string, path ...string) securityaudit.Setting {
	a := cfg.Attribute(path...)
	if v, ok := cfg.StringValue(a); ok {
		return securityaudit.Setting{Value: v, At: config.Position(a.Expr.Range())}
	}
	return securityaudit.Setting{Value: def}
}

// setting is a decoded value with the position of its attribute.
func setting(cfg *config.Config, v string, path ...string) securityaudit.Setting {
	return securityaudit.Setting{Value: v, At: at(cfg, path...)}
}

// pluginSetting is attribute name of p's config block, as written.
func pluginSetting(cfg *config.Config, p *config.Plugin, name string) securityaudit.Setting {
	return fileSetting(cfg, "", "plugin", p.Name, "config", name)
}

// at is the file:line of the attribute at path, "" when not written.
func at(cfg *config.Config, path ...string) string {
	if a := cfg.Attribute(path...); a != nil {
		return config.Position(a.Expr.Range())
	}
	return ""
}

// elems are the values of a list attribute, each at its element's line
// when the list is written out.
func elems(cfg *config.Config, values []string, path ...string) []securityaudit.Setting {
	return elemsOf(cfg.Attribute(path...), values)
}

// elemsOf are the values of list attribute a (nil: not written), each at
// its element's line when the list is written out.
func elemsOf(a *hcl.Attribute, values []string) []securityaudit.Setting {
	var ranges []hcl.Range
	if a != nil {
		if t, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok && len(t.Exprs) == len(values) {
			for _, e := range t.Exprs {
				ranges = append(ranges, e.Range())
			}
		}
	}
	out := make([]securityaudit.Setting, len(values))
	for i, v := range values {
		out[i].Value = v
		switch {
		case ranges != nil:
			out[i].At = config.Position(ranges[i])
		case a != nil:
			out[i].At = config.Position(a.Expr.Range())
		}
	}
	return out
}

func auditStorage(cfg *config.Config) securityaudit.Storage {
	s := securityaudit.Storage{Engine: cfg.Storage.Engine, At: at(cfg, "storage", "url")}
	if s.At == "" {
		s.At = at(cfg, "storage", "engine")
	}
	if s.Engine == config.EnginePostgres {
		s.RemoteHost, s.SSLMode = config.PostgresTarget(cfg.Storage.URL, cfg.LookupEnv)
	}
	return s
}

// literalSecrets are the secrets written out in the file: plugin config
// attributes named like secrets, env entries named like secrets (agent
// and plugins), and a storage url with a password.
func literalSecrets(cfg *config.Config) []securityaudit.Setting {
	var out []securityaudit.Setting
	add := func(name string, e hcl.Expression) {
		if !config.Literal(e) {
			return
		}
		if v, diags := e.Value(nil); diags.HasErrors() || v.IsNull() || (v.Type() == cty.String && v.AsString() == "") {
			return
		}
		out = append(out, securityaudit.Setting{Value: name, At: config.Position(e.Range())})
	}
	envs := func(prefix string, path ...string) {
		items := config.ObjectItems(cfg.Attribute(path...))
		names := make([]string, 0, len(items))
		for n := range items {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if redact.SecretName(n) {
				add(prefix+n, items[n])
			}
		}
	}
	envs("agent.env.", "agent", "env")
	for _, p := range cfg.Plugins {
		envs(`plugin "`+p.Name+`" env.`, "plugin", p.Name, "env")
		if p.ConfigBlock == nil {
			continue
		}
		if body, ok := p.ConfigBlock.Body.(*hclsyntax.Body); ok {
			names := make([]string, 0, len(body.Attributes))
			for n := range body.Attributes {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				if secretAttrRe().MatchString(n) {
					add(`plugin "`+p.Name+`" config.`+n, body.Attributes[n].Expr)
				}
			}
		}
	}
	if a := cfg.Attribute("storage", "url"); a != nil && len(redact.URLPassword(cfg.Storage.URL)) > 0 {
		add("storage.url (its password)", a.Expr)
	}
	return out
}
