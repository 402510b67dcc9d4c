package gateway

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/core/export"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// exporter is /export's port: it writes the session's Markdown file into
// the session's own media directory of its agent's workspace, where the
// reply's MEDIA: line may send it from (the outbox sends it once; the
// media pruner removes it after agent.media_keep).
type exporter struct{ g *Gateway }

func (e exporter) Export(ctx context.Context, key string) (string, int, error) {
	g := e.g
	s, err := g.store.Session(ctx, key)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.ClaudeSessionID == "") {
		return "", 0, export.ErrNoTranscript
	}
	if err != nil {
		return "", 0, err
	}
	set := g.settings()
	ws := set.Delivery.Workspace
	if agent, _ := sessionkey.SplitAgent(key); set.Delivery.AgentWorkspaces[agent] != "" {
		ws = set.Delivery.AgentWorkspaces[agent]
	}
	if ws == "" {
		return "", 0, errors.New("no workspace is configured")
	}
	path, _ := export.FindTranscript(set.TranscriptDirs, s.ClaudeSessionID)
	dir := filepath.Join(ws, sessionkey.MediaDir, sessionkey.Dir(key))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	now := g.opts.Now()
	out := filepath.Join(dir, fmt.Sprintf("session-%s.md", now.UTC().Format("20060102-150405.000")))
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, err
	}
	n, werr := export.Write(f, export.Session{Key: key, ClaudeSessionID: s.ClaudeSessionID, Model: s.Model, Started: s.CreatedAt, Turns: s.Turns, CostUSD: s.CostUSD},
		path, set.Turn.Location)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		os.Remove(out)
		return "", 0, werr
	}
	if path == "" {
		g.log.Warn("/export: claude's transcript of the session was not found; the file has its header only",
			"session", key, "claude_session", s.ClaudeSessionID, "looked_in", set.TranscriptDirs)
	}
	return out, n, nil
}
