package turn

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// The agent's send_file tool (core/agenttools) queues a file for the reply
// of the turn running in its chat: the turn adds a MEDIA: line for it to
// its final reply, which the outbox records and delivers like any reply —
// once, also across a restart (the file goes with the reply's last chunk).
// A turn that is re-run after a crash before its reply was recorded runs
// claude again, which sends the file again if it still means to.

// ErrNoTurn: no turn runs in the chat a send_file call names.
var ErrNoTurn = errors.New("no reply is being written in this chat")

// fileBox holds the files queued for one running turn.
type fileBox struct {
	key   sessionkey.Key
	msgID string // the latest message of the turn (what react reacts to)
	// reacted: the react tool set a reaction (under files.mu).
	reacted bool
	lines   []string // caption lines and MEDIA: lines, in call order
	names   []string // the resolved paths, for duplicates
}

// files are the boxes of the running turns by chat.
type files struct {
	mu    sync.Mutex
	boxes map[message.Target]*fileBox
}

func (f *files) open(tgt message.Target, key sessionkey.Key, msgID string) *fileBox {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.boxes == nil {
		f.boxes = map[message.Target]*fileBox{}
	}
	b := &fileBox{key: key, msgID: msgID}
	f.boxes[tgt] = b
	return b
}

// take removes the box and returns what it holds for the reply.
func (f *files) take(tgt message.Target, b *fileBox) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.boxes[tgt] == b {
		delete(f.boxes, tgt)
	}
	return b.lines
}

// reacted reports whether the react tool set a reaction during b's turn.
func (f *files) reacted(b *fileBox) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return b.reacted
}

// ReactTo sets the bot's reaction emoji on the latest message of the turn
// running in chat tgt (the agent's react tool). A reaction is not a reply:
// it is set at once, and setting it again (a turn re-run after a restart)
// changes nothing.
func (t *Turns) ReactTo(tgt message.Target, emoji string) error {
	t.files.mu.Lock()
	b := t.files.boxes[tgt]
	t.files.mu.Unlock()
	switch {
	case b == nil:
		return ErrNoTurn
	case !t.opts.Output.CanReact(tgt.Instance):
		return errors.New("this chat's channel has no reactions")
	case b.msgID == "":
		return errors.New("the message has no id to react to")
	}
	if err := t.opts.Output.React(tgt, b.msgID, strings.TrimSpace(emoji)); err != nil {
		return err
	}
	t.files.mu.Lock()
	b.reacted = true
	t.files.mu.Unlock()
	return nil
}

// AttachFile queues the file at path (in the workspace of the agent of the
// turn running in chat tgt) for that turn's reply, with caption as a line
// of text before it. The file must be one the chat may get (the
// delivery's check: inside the workspace with links resolved, not another
// chat's attachment, a regular file within the size limit) and the
// channel must take files. It returns the file's name for the tool's
// answer.
func (t *Turns) AttachFile(tgt message.Target, path, caption string) (string, error) {
	if t.opts.Labels != nil {
		if caps, ok := t.opts.Labels.Capabilities(tgt.Instance); ok && !slices.Contains(caps.MediaOut, channel.MediaDocument) {
			return "", fmt.Errorf("this chat's channel cannot receive files")
		}
	}
	t.files.mu.Lock()
	b := t.files.boxes[tgt]
	t.files.mu.Unlock()
	if b == nil {
		return "", ErrNoTurn
	}
	real, err := t.opts.Output.CheckFile(b.key, tgt.Instance, path)
	if err != nil {
		return "", fmt.Errorf("%s was not sent: %w", filepath.Base(path), err)
	}
	t.files.mu.Lock()
	defer t.files.mu.Unlock()
	if slices.Contains(b.names, real) {
		return filepath.Base(real), nil // the same file twice goes once
	}
	if c := strings.TrimSpace(caption); c != "" {
		b.lines = append(b.lines, c)
	}
	b.lines = append(b.lines, "MEDIA:"+real)
	b.names = append(b.names, real)
	return filepath.Base(real), nil
}
