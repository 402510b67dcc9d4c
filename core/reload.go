package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/mediaprune"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/sandboxreach"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/core/store"
)

// ReloadFrom is what a SIGHUP does: it loads the configuration file at
// path and, when the file loads without errors, reloads it (Reload, which
// still refuses it when a plugin rejects its block). A file that does not
// load is refused whole (refuse, with its diagnostics as `clawhost
// validate` prints them) and the running set kept. It returns whether the
// new configuration was applied and the warnings of a file that loaded,
// formatted for the operator (empty when there are none).
func (h *Host) ReloadFrom(path string) (applied bool, warnings string) {
	h.reloading.Lock() // SIGHUP and clawhost reload, one at a time
	defer h.reloading.Unlock()
	at := time.Now()
	if h.opts.ReloadEnv != nil {
		changed, err := h.opts.ReloadEnv()
		if err != nil {
			h.refuse(at, err.Error())
			return false, ""
		}
		if len(changed) > 0 {
			h.log.Info("reload: the environment file changed these variables", "names", strings.Join(changed, ", "))
		}
	}
	next, diags := config.Load(path)
	var files map[string]*hcl.File
	if next != nil {
		files = next.Files()
	}
	var buf bytes.Buffer
	if len(diags) > 0 {
		config.FormatDiagnostics(&buf, diags, files)
	}
	if next == nil || diags.HasErrors() {
		h.refuse(at, buf.String())
		return false, ""
	}
	// A refusal is logged and shown by the host (refuse).
	return h.Reload(next) == nil, buf.String()
}

// reloadFunc is an [admin.Reloader] as a function.
type reloadFunc func() admin.Reload

// Reload implements [admin.Reloader].
func (f reloadFunc) Reload() admin.Reload { return f() }

// reloadFile is the admin endpoint's POST /reload: path, the configuration
// file the host started with, reloaded as on SIGHUP; it returns the
// outcome.
func (h *Host) reloadFile(path string) admin.Reload {
	h.ReloadFrom(path)
	if last := h.lastReloaded(); last != nil {
		return *last
	}
	return admin.Reload{}
}

// Reload applies a new, valid configuration: pipeline settings replaced,
// plugins started, stopped or restarted by what changed, sessions
// untouched. Before anything is stopped, the block of every new or changed
// enabled plugin is checked by its plugin (checkChanged: a probe process,
// bounded by its start timeout). A configuration it cannot apply, or one a
// plugin rejects, or one that lets strangers reach an unsandboxed agent
// (sandboxreach.Check), is refused whole and the running set kept; the refusal
// is logged with the diagnostics at file:line:col and recorded for the
// status page (see refuse).
func (h *Host) Reload(cfg *config.Config) error {
	at := time.Now()
	err := h.normalizeIDs(cfg, h.plugins, h.runningCapabilities)
	var set gateway.Settings
	if err == nil {
		set, err = settings.Pipeline(cfg)
	}
	if err == nil {
		err = h.sameAgents(cfg)
	}
	if err == nil {
		// The sandbox is the one the host started with.
		err = sandboxreach.Check(cfg, set.Access, h.sandbox, sandboxreach.Probe(h.plugins))
	}
	if err != nil {
		err = fmt.Errorf("configuration refused: %w", err)
		h.refuse(at, err.Error())
		return err
	}
	if diags := h.checkChanged(cfg); len(diags) > 0 {
		var buf bytes.Buffer
		config.FormatDiagnostics(&buf, diags, cfg.Files())
		if diags.HasErrors() {
			h.refuse(at, buf.String())
			return errors.New("configuration refused: a plugin rejects its config block")
		}
		h.log.Warn("reload: plugins warn about their config blocks", "diagnostics", buf.String())
	}
	// The agents' next-turn settings (runner.NextTurnFields) reach new and warm
	// claude processes alike; the runner refuses a configuration it cannot run.
	if err := h.updateRunner(cfg); err != nil {
		err = fmt.Errorf("configuration refused: %w", err)
		h.refuse(at, err.Error())
		return err
	}
	changed, restart := settings.Changes(h.cfg, cfg)
	h.setLastReload(&admin.Reload{At: at, Changed: changed, NeedsRestart: restart})
	if len(restart) > 0 {
		h.log.Warn("reload: these changes take effect only after a restart of clawhost", "settings", strings.Join(restart, "; "))
	}
	h.redact.Add(configSecrets(cfg)...)
	if cfg.Access.DMPolicy != h.cfg.Access.DMPolicy {
		h.warnUnhonoured(context.Background(), cfg)
	}
	h.cfg = cfg
	h.toolGrants.set(cfg)
	h.gw.SetSettings(set)
	h.plugins.Apply(withRedaction(settings.Plugins(cfg), h.redact))
	h.schedules.Start(cfg)
	h.startMediaPruner(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	h.gw.RefreshCommands(ctx) // drop commands of stopped plugins
	cancel()
	// The same list clawhost reload prints: a SIGHUP's log says it too.
	h.log.Info("configuration reloaded", "plugins", len(cfg.EnabledPlugins()), "changed", strings.Join(changed, "; "))
	return nil
}

// sameAgents refuses a reload that adds, removes or changes a named agent:
// the runner's agents are fixed at its start, and a chat bound to a new or
// changed agent must not run with another's workspace or tools meanwhile.
func (h *Host) sameAgents(cfg *config.Config) error {
	rc, err := settings.Runner(cfg)
	if err != nil {
		return err
	}
	now, _ := settings.Runner(h.cfg)
	if !reflect.DeepEqual(restartView(rc.Agents), restartView(now.Agents)) {
		return errors.New(`the agent "<id>" blocks changed (added or removed, or a setting a reload cannot apply: workspace, sandbox, run_as, settings, mcp_config, add_dirs, max_warm…): restart clawhost to apply them`)
	}
	return nil
}

// restartView is agents without the settings a reload applies (runner.NextTurnFields).
func restartView(agents map[string]runner.Config) map[string]runner.Config {
	out := make(map[string]runner.Config, len(agents))
	for id, a := range agents {
		v := reflect.ValueOf(&a).Elem()
		for _, f := range runner.NextTurnFields {
			fv := v.FieldByName(f)
			fv.Set(reflect.Zero(fv.Type()))
		}
		out[id] = a
	}
	return out
}

// updateRunner hands the runner the agents' settings of cfg that apply to the next turn.
func (h *Host) updateRunner(cfg *config.Config) error {
	rc, err := settings.Runner(cfg)
	if err != nil {
		return err
	}
	return h.agent.Update(rc)
}

// startMediaPruner (re)starts deleting the attachments of
// <workspace>/media older than agent.media_keep ("0s": none).
func (h *Host) startMediaPruner(cfg *config.Config) {
	if h.agentMedia == nil {
		h.agentMedia = map[string]*mediaprune.Pruner{}
	}
	profiles, _ := settings.Agents(cfg) // a reload refused a run_as that does not resolve
	for _, a := range profiles {
		p := h.media
		if !a.Default {
			if p = h.agentMedia[a.ID]; p == nil {
				p = mediaprune.New(mediaprune.Options{Logger: h.log.Named(a.ID)})
				h.agentMedia[a.ID] = p
			}
		}
		p.Start(filepath.Join(a.Runner.Workspace, sessionkey.MediaDir), a.MediaKeep)
	}
}

// refuse records that the reload asked for at at was refused — the file
// did not load, or a plugin rejected its block — and logs why (reason:
// diagnostics as `clawhost validate` prints them). The running set is
// kept; the status page, /status.json and `clawhost status` show the
// refusal until the next reload.
func (h *Host) refuse(at time.Time, reason string) {
	h.setLastReload(&admin.Reload{At: at, Refused: true, Reason: reason})
	h.log.Error("configuration refused; keeping the running set", "config", h.cfg.Path(), "diagnostics", reason)
}

func (h *Host) setLastReload(r *admin.Reload) {
	h.reloadMu.Lock()
	h.lastReload = r
	h.reloadMu.Unlock()
	if h.db == nil {
		return
	}
	e := store.AuditEvent{Kind: store.AuditReload, Actor: "host", Subject: h.cfg.Path(), Decision: "applied"}
	if r.Refused {
		e.Decision, e.Detail = "refused", r.Reason
	}
	if err := h.db.Audit(context.Background(), e); err != nil {
		h.log.Error("audit trail write failed", "kind", e.Kind, "error", err)
	}
}

// lastReloaded is the outcome of the last reload; nil before the first.
func (h *Host) lastReloaded() *admin.Reload {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	if h.lastReload == nil {
		return nil
	}
	r := *h.lastReload
	return &r
}
