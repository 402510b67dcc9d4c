package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// agentIDRe is what an agent id may be: it names the agent in session keys
// ("agent:<id>:…"), in /agent and in metrics labels.
var agentIDRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`) })

// AllAgents returns the default agent, then the agent "<id>" blocks in file
// order.
func (c *Config) AllAgents() []*Agent {
	return append([]*Agent{c.Agent}, c.Agents...)
}

// AgentByID returns the agent with the given id, or nil.
func (c *Config) AgentByID(id string) *Agent {
	for _, a := range c.AllAgents() {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// splitAgents returns body without its labelled agent blocks, and those
// blocks: the Config's schema decodes the unlabelled block; the labelled
// ones are decoded over a copy of it (decodeAgents).
func splitAgents(body *hclsyntax.Body) (*hclsyntax.Body, []*hclsyntax.Block) {
	var named []*hclsyntax.Block
	rest := *body
	rest.Blocks = nil
	for _, b := range body.Blocks {
		if b.Type == "agent" && len(b.Labels) > 0 {
			named = append(named, b)
			continue
		}
		rest.Blocks = append(rest.Blocks, b)
	}
	return &rest, named
}

// decodeAgents decodes each agent "<id>" block over a copy of the default
// agent as the file set it (before paths are resolved), so what it does not
// set is inherited.
func (c *Config) decodeAgents(blocks []*hclsyntax.Block) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, b := range blocks {
		a := c.Agent.inherited()
		a.ID = b.Labels[0]
		a.block = b
		if len(b.Labels) > 1 {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Extraneous label for agent",
				Detail: "An agent block has one label, its id: agent \"ops\" { … }.", Subject: b.LabelRanges[1].Ptr()})
		}
		diags = append(diags, tidyDecodeDiagnostics(decodeBody(b.Body, c.ctx, a), b.Body)...)
		c.Agents = append(c.Agents, a)
	}
	return diags
}

// inherited is a deep copy of a for an agent "<id>" block to decode over,
// without what is each agent's own (chats, switchable, worktrees and its
// MCP servers).
func (a *Agent) inherited() *Agent {
	n := *a
	n.Args = slices.Clone(a.Args)
	n.Env = maps.Clone(a.Env)
	n.PermissionModes = slices.Clone(a.PermissionModes)
	n.Models = slices.Clone(a.Models)
	n.AllowedTools = slices.Clone(a.AllowedTools)
	n.DisallowedTools = slices.Clone(a.DisallowedTools)
	n.Tools = slices.Clone(a.Tools)
	n.MCPConfig = slices.Clone(a.MCPConfig)
	n.AddDirs = slices.Clone(a.AddDirs)
	if a.MemoryFlush != nil {
		mf := *a.MemoryFlush
		n.MemoryFlush = &mf
	}
	if a.Budget != nil {
		b := *a.Budget
		n.Budget = &b
	}
	if a.Spare != nil {
		sp := *a.Spare
		n.Spare = &sp
	}
	n.Chats, n.Switchable, n.Worktrees, n.MCPServers = nil, false, false, nil
	n.block = nil
	return &n
}

// Attribute is attribute name as agent "<id>" block a writes it; nil when
// the block does not (the agent inherits the default's) or a is the default
// agent (Config.Attribute reads that block).
func (a *Agent) Attribute(name string) *hcl.Attribute {
	if a.block == nil {
		return nil
	}
	if at := a.block.Body.Attributes[name]; at != nil {
		return at.AsHCLAttribute()
	}
	return nil
}

// resolveAgentPaths makes an agent's relative paths relative to c.dir.
func (c *Config) resolveAgentPaths(a *Agent) {
	a.Workspace = c.resolve(a.Workspace)
	if rest, ok := strings.CutPrefix(a.OwnerClaudeDir, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			a.OwnerClaudeDir = filepath.Join(home, rest)
		}
	}
	a.OwnerClaudeDir = c.resolve(a.OwnerClaudeDir)
	a.SystemPromptFile = c.resolve(a.SystemPromptFile)
	if strings.ContainsRune(a.Command, '/') || strings.ContainsRune(a.Command, filepath.Separator) {
		a.Command = c.resolve(a.Command)
	}
	for i, d := range a.AddDirs {
		a.AddDirs[i] = c.resolve(d)
	}
	for i, s := range a.MCPServers {
		if strings.ContainsRune(s.Command, '/') {
			a.MCPServers[i].Command = c.resolve(s.Command)
		}
	}
}

// checkAgents checks the agent "<id>" blocks: their ids, their own
// attributes (what they inherit was checked in the default block), their
// bindings, and agents sharing a workspace.
func checkAgents(k *checker, c *Config) {
	seen := map[string]*Agent{}
	for _, a := range c.Agents {
		b := a.block
		switch {
		case !agentIDRe().MatchString(a.ID):
			k.errorf(b.LabelRanges[0].Ptr(), "Invalid agent id",
				"%q is not an agent id: use 1 to 32 lower-case letters, digits, \"_\" and \"-\", starting with a letter or digit, e.g. \"ops\".", a.ID)
		case a.ID == DefaultAgentID:
			k.errorf(b.LabelRanges[0].Ptr(), "Duplicate agent",
				"%q is the default agent's id: set its attributes in the unlabelled agent { } block.", a.ID)
		case seen[a.ID] != nil:
			first := seen[a.ID].block.DefRange()
			k.errorf(b.LabelRanges[0].Ptr(), "Duplicate agent",
				"An agent %q was already defined at %s. Each agent id names one agent block.", a.ID, pos(first))
		default:
			seen[a.ID] = a
		}
		sub := k.sub(b.Body, fmt.Sprintf("agent %q", a.ID))
		for _, h := range DefaultAgentOnly {
			if at := b.Body.Attributes[h.Name]; at != nil {
				sub.errorf(at.NameRange.Ptr(), "Attribute of the default agent only",
					"%s is not an agent's own: %s. Set it in the unlabelled agent { } block, and remove it here.", sub.qualified(h.Name), h.Why)
			}
		}
		own := &checker{cfg: k.cfg, body: b.Body, where: sub.where, diags: new(hcl.Diagnostics)}
		a.check(own)
		for _, d := range *own.diags {
			// What the agent inherits was checked (and reported) in the
			// default block; report what its own attributes cause.
			if d.Subject != nil && within(b.Range(), *d.Subject) {
				k.emit(d)
			}
		}
	}
	for _, a := range c.AllAgents() {
		if a.Worktrees {
			ak := k.block("agent")
			if a.block != nil {
				ak = k.sub(a.block.Body, fmt.Sprintf("agent %q", a.ID))
			}
			ws := c.resolve(a.Workspace)
			if _, err := os.Stat(filepath.Join(ws, ".git")); err != nil {
				ak.errorf(ak.valueRange("worktrees"), "Worktrees need a git repository",
					"With worktrees = true each chat works in its own git worktree of the workspace, and %s is not a git repository (no .git). Run git init there and make a first commit, or remove the line.", ws)
			}
		}
	}
	checkBindings(k, c)
	valid := []*Agent{c.Agent}
	for _, a := range c.Agents {
		if seen[a.ID] == a {
			valid = append(valid, a)
		}
	}
	checkSharedWorkspaces(k, c, valid)
}

// DefaultAgentOnly are the agent attributes that are the host's, not an
// agent's: they are set in the default agent { } block, and an agent "<id>"
// block that sets one is refused (validate says why) rather than silently
// not applied. Every other attribute of a named block applies to that
// agent's turns (core/settings' TestProfileHomesEveryField checks that each has a home).
var DefaultAgentOnly = []struct{ Name, Why string }{
	{"max_concurrent", "it is the host's one count of turns running at once, shared by all agents"},
	{"one_shot", "it decides for the whole host whether claude processes are kept warm between turns, and with them whether a message can steer a running turn"},
	{"approvers", "one approval policy asks and answers the tool approval questions of all agents"},
	{"approval_timeout", "one approval policy asks and answers the tool approval questions of all agents"},
}

// within reports whether r lies inside outer.
func within(outer, r hcl.Range) bool {
	return r.Filename == outer.Filename && r.Start.Byte >= outer.Start.Byte && r.End.Byte <= outer.End.Byte
}

// checkSharedWorkspaces warns about two agents on one workspace without
// worktrees: their claude processes would change the same files at once.
func checkSharedWorkspaces(k *checker, c *Config, agents []*Agent) {
	byWorkspace := map[string]*Agent{}
	for _, a := range agents {
		ws := filepath.Clean(c.resolve(a.Workspace))
		first := byWorkspace[ws]
		if first == nil {
			byWorkspace[ws] = a
			continue
		}
		if a.Worktrees && first.Worktrees {
			continue
		}
		subject := a.block.DefRange().Ptr()
		if r := k.sub(a.block.Body, "").valueRange("workspace"); r != nil {
			subject = r
		}
		k.emit(warning(subject, "Two agents share a workspace",
			fmt.Sprintf("Agents %q and %q both work in %s: their turns would change the same files at once. "+
				"Give agent %q a workspace of its own, or set worktrees = true on both (each chat then works in its own git worktree).",
				first.ID, a.ID, ws, a.ID)))
	}
}
