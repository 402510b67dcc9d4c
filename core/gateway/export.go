package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/export"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/turn"
)

// ExportSession writes session k's export as /export does (the operator's
// page's export link) and returns the file's path.
func (g *Gateway) ExportSession(ctx context.Context, k sessionkey.Key) (string, error) {
	path, _, err := exporter{g}.Export(ctx, k)
	return path, err
}

// exporter is /export's port: it writes the session's Markdown file into
// the session's own media directory of its agent's workspace, where the
// reply's MEDIA: line may send it from (the outbox sends it once; the
// media pruner removes it after agent.media_keep).
type exporter struct{ g *Gateway }

func (e exporter) Export(ctx context.Context, k sessionkey.Key) (string, int, error) {
	g := e.g
	key := k.String()
	s, err := g.store.Session(ctx, key)
	if errors.Is(err, store.ErrNotFound) || (err == nil && s.ClaudeSessionID == "") {
		return "", 0, export.ErrNoTranscript
	}
	if err != nil {
		return "", 0, err
	}
	set := g.settings()
	ws := set.Delivery.Workspace
	if set.Delivery.AgentWorkspaces[k.Agent] != "" {
		ws = set.Delivery.AgentWorkspaces[k.Agent]
	}
	if ws == "" {
		return "", 0, errors.New("no workspace is configured")
	}
	path, _ := export.FindTranscript(set.TranscriptDirs, s.ClaudeSessionID)
	dir := filepath.Join(ws, sessionkey.MediaDir, k.Dir())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", 0, err
	}
	now := g.opts.Now()
	out := filepath.Join(dir, fmt.Sprintf("session-%s.md", now.UTC().Format("20060102-150405.000")))
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, err
	}
	msgs, err := e.messages(ctx, key, s)
	if err != nil {
		g.log.Warn("/export: the journal could not be read; the file has claude's transcript only", "session", key, "error", err)
	}
	n, werr := export.Write(f, export.Session{Key: key, ClaudeSessionID: s.ClaudeSessionID, Model: s.Model, Started: s.CreatedAt, Turns: s.Turns, CostUSD: s.CostUSD},
		msgs, path, set.Turn.Location)
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		os.Remove(out)
		return "", 0, werr
	}
	if path == "" {
		g.log.Warn("/export: claude's transcript of the session was not found; the file has no tool steps",
			"session", key, "claude_session", s.ClaudeSessionID, "looked_in", set.TranscriptDirs)
	}
	return out, n, nil
}

// exportLimit bounds the journal entries one export reads (the newest).
const exportLimit = 2000

// messages reads the session's conversation from the journal: the chat's
// entries of the session since the earlier session's last message (a
// session's row is stored at its first turn, after its first messages
// came), and the ones refused or answered before they were routed (access,
// the flood limit and its notice), which belong to no session yet. Nothing when the session was
// never answered (its chat is not known).
func (e exporter) messages(ctx context.Context, key string, s store.Session) ([]export.Message, error) {
	tgt := s.LastTarget
	if tgt.Instance == "" || tgt.ChatID == "" {
		return nil, nil
	}
	var since time.Time
	for _, p := range e.g.meta.Of(s).Past {
		if !p.Last.After(s.CreatedAt) && p.Last.After(since) {
			since = p.Last.Add(time.Nanosecond)
		}
	}
	hist, err := e.g.store.ChatHistory(ctx, store.HistoryFilter{Instance: tgt.Instance, ChatID: tgt.ChatID, ThreadID: tgt.ThreadID, Since: since}, exportLimit)
	if err != nil {
		return nil, err
	}
	var out []export.Message
	for _, h := range hist {
		unfinished := h.State == store.StateDropped || h.State == store.StateFailed
		if h.SessionKey != key && (h.SessionKey != "" || !(unfinished || h.Replied)) {
			continue // another session's, or unaddressed group chatter
		}
		m, err := message.Decode(h.Message)
		if err != nil {
			continue
		}
		x := export.Message{At: h.ReceivedAt, From: exportSender(&m), Text: m.Body, Reply: h.Reply, ReplyAt: h.RepliedAt, ByHost: h.Replied && !h.Ran}
		switch {
		case unfinished && h.SessionKey == "":
			x.Refused = "refused: " + cmp.Or(h.Reason, string(h.State))
		case unfinished:
			x.Refused = "not answered: " + cmp.Or(h.Reason, string(h.State))
		}
		if len(m.Media) > 0 && strings.TrimSpace(x.Text) == "" {
			x.Text = fmt.Sprintf("(%d attachment(s))", len(m.Media))
		}
		out = append(out, x)
	}
	return out, nil
}

// exportSender names a message's sender for the export: the name they go
// by and their id, or the schedule that wrote it.
func exportSender(m *message.Message) string {
	if m.Scheduled != "" {
		return turn.SenderOf(m)
	}
	if name := strings.TrimSpace(m.Sender.Name); name != "" {
		return name + " (" + m.From + ")"
	}
	return m.From
}
