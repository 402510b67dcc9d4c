package core

import (
	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/doctor"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/internal/procmem"
)

// warnWarmMemory warns at start when the warm claude processes may hold
// more than a third of the machine's memory.
func warnWarmMemory(cfg *config.Config, log interface{ Warn(string, ...any) }) {
	if w := doctor.WarmMemoryWarning(cfg.Agent, procmem.MemTotal()); w != "" {
		log.Warn(w)
	}
}

// logClaudeCommands says which claude CLI each agent runs and how it was
// found (PATH, or one of claude's install places): the same lookup with or
// without make run's PATH, under a service manager too.
func logClaudeCommands(cfg *config.Config, log hclog.Logger) {
	seen := map[string]bool{}
	for _, ag := range cfg.AllAgents() {
		if seen[ag.Command] {
			continue
		}
		seen[ag.Command] = true
		if f, err := installpath.FindCommand(ag.Command); err == nil {
			log.Info("claude CLI", "agent", ag.ID, "path", f.Path, "found", f.Where)
		}
	}
}
