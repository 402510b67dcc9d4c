package core

import (
	"os"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"github.com/clawhost/clawhost/core/pluginhost"
)

// reportStart follows "clawhost started" (logged while the plugins may
// still be starting: they start in the background) with the truth about
// them once each has left starting, bounded by its start timeout: a WARN
// "clawhost is degraded" naming each enabled plugin that is not ready and
// its state (its error is the line before: a web chat whose port another process holds, a token the platform
// refuses), which /healthz (503) and clawhost status (exit 1) also say.
// Nothing is logged when all are ready. It returns early at Shutdown. A
// plugin of another release than clawhost is warned of first, and a host
// none of whose enabled plugins is a channel is warned of last.
func (h *Host) reportStart() {
	h.warnOtherReleases()
	var longest time.Duration
	for _, p := range h.cfg.EnabledPlugins() {
		longest = max(longest, p.StartTimeout.Duration())
	}
	deadline := time.NewTimer(longest + 5*time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		starting, bad, described := false, []string(nil), []admin.Plugin(nil)
		for _, inst := range h.plugins.Instances() {
			st := inst.Status()
			described = append(described, admin.Plugin{Kinds: st.Description.Kinds()})
			switch st.State {
			case pluginhost.StateStarting:
				starting = true
			case pluginhost.StateReady, pluginhost.StateStandby, pluginhost.StateStopped:
			default:
				// The plugin's error was logged at file:line just before.
				bad = append(bad, st.Instance+" ("+string(st.State)+")")
			}
		}
		if !starting {
			if len(bad) > 0 {
				h.log.Warn("clawhost is degraded: plugins are not ready after the start (/healthz answers 503; clawhost status says what to do)", "plugins", strings.Join(bad, "; "))
			}
			if c := admin.ChannelsOf(described); c.State != admin.ChannelsOK {
				h.log.Warn("clawhost is not healthy: "+c.LastError+" (/healthz answers 503)", "to_do", c.Action)
			}
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			h.log.Warn("clawhost is degraded: plugins are still starting", "after", longest+5*time.Second)
			return
		case <-h.quit:
			return
		}
	}
}

// warnOtherReleases logs each enabled plugin of another install.sh
// release than this clawhost (plugin_dir naming the old release after an
// upgrade); clawhost doctor warns of it too, with what to do.
func (h *Host) warnOtherReleases() {
	self, err := os.Executable()
	if err != nil {
		return
	}
	for _, p := range h.cfg.EnabledPlugins() {
		if mine, theirs, other := installpath.OtherRelease(self, p.Path); other {
			h.log.Warn("plugin is of another release than this clawhost (plugin_dir names the old release after an upgrade?); clawhost doctor says what to do",
				"instance", p.Name, "path", p.Path, "release", theirs, "clawhost", mine)
		}
	}
}
