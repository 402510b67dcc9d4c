package mcpchannel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

// event is the params of a notifications/claude/channel.
type event struct {
	Content string         `json:"content"`
	Meta    map[string]any `json:"meta"`
}

// handle hands one notification to the host. A malformed one is logged
// and dropped; the error is Deliver's (the plugin is stopping).
func (a *Adapter) handle(ctx context.Context, inbox channel.Inbox, n notification) error {
	switch n.method {
	case methodMessage:
		msg, err := a.inbound(n.params)
		if err != nil {
			a.log.Warn("dropped a channel event", "error", err)
			return nil
		}
		return inbox.Deliver(ctx, msg)
	case methodPermission:
		msg, ok := a.answered(n.params)
		if !ok {
			a.log.Info("a permission answer to no open prompt; ignored")
			return nil
		}
		return inbox.Deliver(ctx, msg)
	default:
		a.log.Debug("ignored a notification of the server", "method", n.method)
		return nil
	}
}

// inbound converts a notifications/claude/channel's params: conversation
// and sender ids from meta (chat_id; user_id, else user), the text from
// content, attachments from the paths meta names (any key ending in
// _path) and from attachment_file_id. The server gated the sender
// already; a group's mention rules are its own, so every message counts
// as addressed to the bot (WasMentioned).
func (a *Adapter) inbound(raw json.RawMessage) (channel.InboundMessage, error) {
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return channel.InboundMessage{}, fmt.Errorf("decode: %w", err)
	}
	meta := make(map[string]string, len(ev.Meta))
	for k, v := range ev.Meta {
		switch x := v.(type) {
		case string:
			meta[k] = x
		case nil:
		default:
			meta[k] = fmt.Sprint(x)
		}
	}
	chat := meta["chat_id"]
	if chat == "" {
		return channel.InboundMessage{}, fmt.Errorf("no chat_id in meta")
	}
	sender := meta["user_id"]
	if sender == "" {
		sender = meta["user"]
	}
	if sender == "" {
		sender = chat
	}
	msg := channel.InboundMessage{
		ChatID:       chat,
		MessageID:    meta["message_id"],
		Sender:       channel.Sender{ID: sender, Name: meta["user"], Username: meta["user"]},
		Text:         ev.Content,
		WasMentioned: true,
		Timestamp:    time.Now(),
	}
	if ts, err := time.Parse(time.RFC3339Nano, meta["ts"]); err == nil {
		msg.Timestamp = ts
	}
	switch a.cfg.ChatType {
	case chatTypeDirect:
		msg.ChatType = channel.ChatDirect
	case chatTypeGroup:
		msg.ChatType = channel.ChatGroup
	default:
		msg.ChatType = channel.ChatGroup
		if chat == sender {
			msg.ChatType = channel.ChatDirect
		}
	}
	if msg.MessageID == "" {
		// The host dedupes on the id: one made of what the event says
		// stays the same when a server sends it twice.
		sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s\x00%s", chat, sender, meta["ts"], ev.Content))
		msg.MessageID = "h" + hex.EncodeToString(sum[:8])
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := meta[k]
		if !strings.HasSuffix(k, "_path") || p == "" {
			continue
		}
		kind := channel.MediaDocument
		if k == "image_path" || strings.HasPrefix(mimeOf(p), "image/") {
			kind = channel.MediaImage
		}
		msg.Media = append(msg.Media, channel.Media{Kind: kind, Ref: refPath + p, MIME: mimeOf(p), Size: -1, Filename: filepath.Base(p)})
	}
	if id := meta["attachment_file_id"]; id != "" {
		m := channel.Media{Kind: channel.MediaDocument, Ref: refFile + id, MIME: meta["attachment_mime"], Size: -1, Filename: meta["attachment_name"]}
		switch channel.MediaKind(meta["attachment_kind"]) {
		case channel.MediaImage, channel.MediaAudio, channel.MediaVoice, channel.MediaVideo, channel.MediaSticker:
			m.Kind = channel.MediaKind(meta["attachment_kind"])
		}
		if n, err := strconv.ParseInt(meta["attachment_size"], 10, 64); err == nil {
			m.Size = n
		}
		msg.Media = append(msg.Media, m)
	}
	return msg, nil
}

// mimeOf guesses a file's type from its extension.
func mimeOf(path string) string {
	if t := mime.TypeByExtension(strings.ToLower(filepath.Ext(path))); t != "" {
		return t
	}
	return "application/octet-stream"
}
