package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/google/uuid"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/ownersession"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// ChatState is where a chat's claude keeps its transcripts;
// *runner.Runner implements it (runner.Runner.ChatClaudeDir), and the host
// passes it as Options.ChatState. Without it /continue and /desktop are
// not offered.
type ChatState interface {
	ChatClaudeDir(agent, key string) (dir string, own func(paths ...string) error)
}

// terminal is /continue's and /desktop's port (command.Terminal): the
// owner's own claude sessions of the workspace of a chat's agent, in
// agent.owner_claude_dir. The command layer let only an owner in a chat
// nobody else reaches get here (access.Policy.OwnersOnlyChat). The
// owner's files are read with the host's rights; a copy lands in that
// chat's own claude state only (ChatState), which its sandbox binds as
// before; the owner's file of a session is written only by /desktop, and
// only when it is where the chat's transcript began.
type terminal struct {
	g     *Gateway
	state ChatState
}

// maxListed bounds the sessions /continue lists.
const maxListed = 10

// where is the workspace of k's agent and the owner's claude directory.
func (t terminal) where(k sessionkey.Key) (ws, owner string, err error) {
	set := t.g.settings()
	ws = set.Delivery.Workspace
	if w := set.Delivery.AgentWorkspaces[k.Agent]; w != "" {
		ws = w
	}
	owner = set.OwnerClaudeDirs[k.Agent]
	switch {
	case ws == "":
		return "", "", errors.New("no workspace is configured")
	case owner == "":
		return "", "", errors.New("agent.owner_claude_dir is not set and clawhost's user has no home directory")
	}
	return ws, owner, nil
}

func (t terminal) Sessions(ctx context.Context, k sessionkey.Key, m *message.Message) ([]ownersession.Session, string, error) {
	ws, owner, err := t.where(k)
	if err != nil {
		return nil, ws, err
	}
	list, err := ownersession.List(owner, ws, t.g.opts.Now(), maxListed)
	t.audit(ctx, m, "", "listed", fmt.Sprintf("%d session(s) in %s (%v)", len(list), ownersession.ProjectDir(owner, ws), err))
	return list, ws, err
}

// chatDir is the claude directory of k's chat, refused when it is the
// owner's own (the chat's claude would write the terminal's files).
func (t terminal) chatDir(k sessionkey.Key, owner string) (string, func(...string) error, error) {
	dir, own := t.state.ChatClaudeDir(k.Agent, k.String())
	if dir == "" || filepath.Clean(dir) == filepath.Clean(owner) {
		return "", nil, errors.New("this agent's claude keeps its state in the owner's own claude directory, so a chat would write the terminal's files; give it a directory of its own (agent.settings \"project\", or CLAUDE_CONFIG_DIR in agent.env)")
	}
	return dir, own, nil
}

func (t terminal) Continue(ctx context.Context, k sessionkey.Key, m *message.Message, s ownersession.Session, takeover bool) (string, error) {
	ws, owner, err := t.where(k)
	if err != nil {
		return "", err
	}
	if s.Turns == 0 {
		return "", errors.New("that session has no prompt to go on from")
	}
	dir, own, err := t.chatDir(k, owner)
	if err != nil {
		return "", err
	}
	data, err := ownersession.Read(s.Path)
	if err != nil {
		return "", fmt.Errorf("read the terminal's transcript: %w", err)
	}
	id, decision := s.ID, "taken over"
	if !takeover {
		id, decision = uuid.NewString(), "forked"
		data = ownersession.Rename(data, s.ID, id)
	}
	dst, err := place(data, filepath.Join(ownersession.ProjectDir(dir, ws), id+".jsonl"), own)
	if err != nil {
		t.audit(ctx, m, s.ID, "failed", err.Error())
		return "", fmt.Errorf("copy the transcript into this chat: %w", err)
	}
	key := k.String()
	t.g.queue.Abort(k, "session continued from the terminal")
	if err := t.g.turns.Adopt(ctx, key, id, int64(s.Turns), func(meta *session.Meta) {
		meta.ContinuedFrom, meta.Takeover = s.ID, takeover
	}); err != nil {
		return "", err
	}
	t.audit(ctx, m, s.ID, decision, fmt.Sprintf("%s copied to %s as session %s", s.Path, dst, id))
	return id, nil
}

// place writes data, a session's transcript, at dst in a chat's claude
// state (0600; directories 0700, given to the agent's user by own). A copy
// already there that the chat went on with (data is its start) is kept.
func place(data []byte, dst string, own func(...string) error) (string, error) {
	if old, err := ownersession.Read(dst); err == nil && bytes.HasPrefix(old, data) {
		return dst, nil
	}
	proj := filepath.Dir(dst)
	if err := os.MkdirAll(proj, 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(proj, ".clawhost-continue-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(data)
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o600)
	}
	if werr == nil {
		werr = own(filepath.Dir(proj), proj, tmp.Name())
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), dst)
	}
	return dst, werr
}

func (t terminal) Desktop(ctx context.Context, k sessionkey.Key, m *message.Message) (string, error) {
	ws, owner, err := t.where(k)
	if err != nil {
		return "", err
	}
	key := k.String()
	sess, err := t.g.store.Session(ctx, key)
	if errors.Is(err, store.ErrNotFound) || err == nil && (sess.ClaudeSessionID == "" || sess.Turns == 0) {
		return "", errors.New("this chat has no session with a turn yet")
	}
	if err != nil {
		return "", err
	}
	dir, _, err := t.chatDir(k, owner)
	if err != nil {
		return "", err
	}
	id := sess.ClaudeSessionID
	found, _ := filepath.Glob(filepath.Join(dir, "projects", "*", id+".jsonl"))
	if len(found) == 0 {
		return "", errors.New("claude's transcript of this chat's session was not found")
	}
	data, err := ownersession.Read(found[0])
	if err != nil {
		return "", err
	}
	// Whole lines only: a turn running now may be writing the last one.
	// What it adds later extends what is handed back now, so the next
	// /desktop hands the rest.
	data = data[:bytes.LastIndexByte(data, '\n')+1]
	dst := filepath.Join(ownersession.ProjectDir(owner, ws), id+".jsonl")
	changed, err := ownersession.HandBack(data, dst)
	if err != nil {
		t.audit(ctx, m, id, "refused", fmt.Sprintf("%s to %s: %v", found[0], dst, err))
		return "", err
	}
	t.audit(ctx, m, id, "handed back", fmt.Sprintf("%s to %s (written: %s)", found[0], dst, strconv.FormatBool(changed)))
	cmd := session.TerminalCommand(ws, ownersession.ConfigDirFor(owner, defaultClaudeDir()), id)
	if t.g.queue.Running(k) {
		cmd += "\n(A turn is running: what it adds is handed back by the next /desktop.)"
	}
	return cmd, nil
}

// defaultClaudeDir is the ~/.claude of clawhost's user: the directory
// claude uses without CLAUDE_CONFIG_DIR ("" without a home).
func defaultClaudeDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".claude")
}

// audit records one step of an owner's session in the audit trail.
func (t terminal) audit(ctx context.Context, m *message.Message, id, decision, detail string) {
	e := store.AuditEvent{Kind: store.AuditOwnerSession, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: id, Decision: decision, Detail: detail}
	if err := t.g.store.Audit(ctx, e); err != nil && ctx.Err() == nil {
		t.g.log.Error("audit trail write failed", "kind", e.Kind, "error", err)
	}
}
