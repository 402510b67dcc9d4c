package turn

import (
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/hook"
)

// hookRequest describes the turn to the before_agent_start hooks: the
// conversation, sender and text of the last message, whether the session
// is new, the agent's workspace (absolute), the claude session id the turn
// runs in, and the attachments of all the turn's messages that were
// downloaded (absolute paths, in message order; one that failed to
// download is left out, as the prompt says it could not be).
func (t *Turns) hookRequest(set Settings, key string, sess store.Session, msgs []message.Message, fresh bool) hook.Request {
	last := &msgs[len(msgs)-1]
	req := hook.Request{
		Conversation: last.Conversation(key), Sender: last.Sender, Message: last.Body, NewSession: fresh,
		Workspace: absPath(set.Workspace), SessionID: sess.ClaudeSessionID,
	}
	for i := range msgs {
		for _, md := range msgs[i].Media {
			if md.Path == "" {
				continue
			}
			a := hook.Attachment{Kind: md.Kind, Path: absPath(md.Path), MIME: md.MIME, Filename: md.Filename, Size: md.Size}
			if fi, err := os.Stat(a.Path); err == nil {
				a.Size = fi.Size()
			}
			req.Attachments = append(req.Attachments, a)
		}
	}
	return req
}

// absPath is p made absolute; empty stays empty.
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
