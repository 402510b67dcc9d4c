package main

import (
	"bytes"
	"errors"
	"path/filepath"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/schema"
)

// specs turns the enabled plugin blocks into what the plugin host runs.
func specs(cfg *config.Config) []pluginhost.Spec {
	var out []pluginhost.Spec
	for _, p := range cfg.EnabledPlugins() {
		p := p
		out = append(out, pluginhost.Spec{
			Instance:     p.Name,
			Source:       p.Source,
			Path:         p.Path,
			SHA256:       p.SHA256,
			StartTimeout: p.StartTimeout.Duration(),
			DataDir:      filepath.Join(cfg.DataDir, "plugins", p.Name),
			Fingerprint:  p.Fingerprint(),
			Decode: func(s schema.Schema) ([]byte, error) {
				js, diags := config.DecodePluginConfig(p, s)
				if diags.HasErrors() {
					var buf bytes.Buffer
					config.FormatDiagnostics(&buf, diags, cfg.Files())
					return nil, errors.New(buf.String())
				}
				return js, nil
			},
		})
	}
	return out
}

// hookOrder lists the enabled plugin instances in config order; the gateway
// calls the ones that turn out to be hooks.
func hookOrder(cfg *config.Config) []string {
	var out []string
	for _, p := range cfg.EnabledPlugins() {
		out = append(out, p.Name)
	}
	return out
}

// accessOf builds the gateway's access rule from the access block. Until
// pairing lands, "pairing" behaves like "allowlist": unknown senders are
// told their id and never reach the agent.
func accessOf(cfg *config.Config) gateway.Access {
	a := gateway.Access{Open: cfg.Access.DMPolicy == "open", Allowed: map[string]bool{}}
	for _, e := range append(append([]string(nil), cfg.Access.AllowFrom...), cfg.Access.Owners...) {
		a.Allowed[e] = true
	}
	return a
}

func agentConfig(cfg *config.Config) runner.Config {
	a := cfg.Agent
	return runner.Config{
		Command:          a.Command,
		Args:             a.Args,
		Env:              a.Env,
		Workspace:        a.Workspace,
		StateDir:         filepath.Join(cfg.DataDir, "runner"),
		Model:            a.Model,
		FallbackModel:    a.FallbackModel,
		PermissionMode:   a.PermissionMode,
		AllowedTools:     a.AllowedTools,
		DisallowedTools:  a.DisallowedTools,
		MCPConfig:        a.MCPConfig,
		AddDirs:          a.AddDirs,
		SystemPrompt:     a.SystemPrompt,
		SystemPromptFile: a.SystemPromptFile,
		Timeout:          a.Timeout.Duration(),
		MaxTurns:         a.MaxTurns,
		IdleTimeout:      a.IdleTimeout.Duration(),
		MaxWarm:          a.MaxWarm,
		MaxConcurrent:    a.MaxConcurrent,
		OneShot:          a.OneShot,
	}
}
