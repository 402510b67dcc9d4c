package core

import (
	"bytes"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
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
