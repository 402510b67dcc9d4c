package mcpchannel

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// IDForms are how operators write an id of a bridged channel in clawhost's
// config: as the server writes it in meta (user_id, else user, for a
// sender; chat_id for a chat), after the instance name: "imsg:<id>". The
// servers' ids have no common shape, so any id without spaces is taken as
// written.
var IDForms = []channel.IDForm{{
	Pattern: `\S+`,
	Hint:    "the user_id (or user) or chat_id the channel server puts in its messages' meta, as it writes it",
}}

// Probe is sdk.Plugin.Probe: it starts the server as Configure would,
// checks that it declares the claude/channel capability and lists its
// tools, and stops it. The start is a real one: a server that polls its
// platform polls for that moment (a Telegram server beside a running
// instance with the same token sees a short 409 Conflict), one that binds
// a port needs it free.
func Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	c, l, err := decodeConfig(cfg)
	if err != nil {
		return rep, err
	}
	a := New()
	a.cfg, a.launch, a.dir = c, l, cfg.DataDir
	a.log = cfg.Log()
	// Notifications of the probe's server are nobody's: dropped.
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-a.events:
			case <-done:
				return
			}
		}
	}()
	s, err := a.start(ctx)
	if err != nil {
		rep.Checks = append(rep.Checks, probe.Check{Name: "server", Verdict: probe.Fail, Found: err.Error(),
			Do: fmt.Sprintf("run %q by hand in %s: it must start, speak MCP on stdio and declare the claude/channel capability", strings.Join(l.argv, " "), probeDir(l, cfg.DataDir))})
		return rep, nil
	}
	defer s.stop()
	if res := s.session.InitializeResult(); res != nil && res.ServerInfo != nil {
		rep.Identity.Name = res.ServerInfo.Title
		if rep.Identity.Name == "" {
			rep.Identity.Name = res.ServerInfo.Name
		}
		rep.Identity.ID = res.ServerInfo.Name
	}
	rep.Checks = append(rep.Checks,
		probe.Check{Name: "server", Verdict: probe.OK, Found: "it starts and declares the claude/channel capability"},
		probe.Check{Name: "tools", Verdict: probe.OK, Found: "it offers " + strings.Join(s.toolNames(), ", ")})
	for _, t := range []struct{ name, lost string }{
		{toolEdit, "no live drafts and no turn card: answers come whole"},
		{toolReact, "no reactions"},
	} {
		if s.tools[t.name] == nil {
			rep.Checks = append(rep.Checks, probe.Check{Name: t.name, Verdict: probe.Warn, Found: "the server has no " + t.name + " tool: " + t.lost,
				Do: "nothing to fix in clawhost; a newer version of the server may offer it"})
		}
	}
	if !declares(s.tools[toolReply], "files") {
		rep.Checks = append(rep.Checks, probe.Check{Name: "files", Verdict: probe.Warn, Found: "the reply tool takes no files: send_file cannot send",
			Do: "nothing to fix in clawhost"})
	}
	return rep, nil
}

// probeDir is where the server runs.
func probeDir(l launch, dataDir string) string {
	if l.dir != "" {
		return l.dir
	}
	if dataDir != "" {
		return dataDir
	}
	return "the instance's data directory"
}
