package attach

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/hashicorp/go-hclog"
)

// Path is the attach endpoint's path on the admin server.
const Path = "/attach"

// helloTimeout bounds the wait for a terminal's hello.
const helloTimeout = 10 * time.Second

// Handler serves the attach endpoint (GET /attach?chat=<instance>:<id>, a
// websocket) on the admin server, which has checked its token; resolve
// names the chat's session key and applies the owner rule.
func Handler(h *Hub, resolve func(ctx context.Context, chat string) (string, error), log hclog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chat := r.URL.Query().Get("chat")
		key, rerr := resolve(r.Context(), chat)
		c, err := websocket.Accept(w, r, nil) // the Origin check: only a same-host page, as the admin endpoint
		if err != nil {
			return
		}
		c.SetReadLimit(4 << 20)
		ctx := r.Context()
		if rerr != nil {
			log.Warn("a terminal was refused attaching to a chat", "chat", chat, "error", rerr)
			_ = wsjson.Write(ctx, c, Frame{Type: FrameRefused, Error: rerr.Error()})
			_ = c.Close(websocket.StatusPolicyViolation, "refused")
			return
		}
		hctx, cancel := context.WithTimeout(ctx, helloTimeout)
		var hello Frame
		err = wsjson.Read(hctx, c, &hello)
		cancel()
		if err != nil || hello.Type != FrameHello {
			_ = c.Close(websocket.StatusProtocolError, "expected a hello")
			return
		}
		t := &wsTerminal{c: c, ctx: ctx}
		l := Link{Key: key, Chat: chat, SessionID: hello.SessionID, Transcript: hello.Transcript}
		if err := h.Attach(l, t); err != nil {
			_ = wsjson.Write(ctx, c, Frame{Type: FrameRefused, Error: err.Error()})
			_ = c.Close(websocket.StatusPolicyViolation, "refused")
			return
		}
		log.Info("a terminal claude attached to a chat", "chat", chat, "session", key)
		if t.Send(Frame{Type: FrameAttached, Chat: chat}) != nil {
			h.Gone(key, t)
			return
		}
		serve(ctx, h, key, t)
		h.Gone(key, t)
		log.Info("a terminal claude left a chat", "chat", chat, "session", key)
	})
}

// serve reads t's frames until its connection ends.
func serve(ctx context.Context, h *Hub, key string, t *wsTerminal) {
	for {
		var f Frame
		if err := wsjson.Read(ctx, t.c, &f); err != nil {
			return
		}
		switch f.Type {
		case FrameReply:
			res := Frame{Type: FrameReplied, Call: f.Call}
			if err := h.Reply(key, t, f.Text, f.Files); err != nil {
				res.Error = err.Error()
			}
			if t.Send(res) != nil {
				return
			}
		case FramePermissionRequest:
			h.Permission(key, t, f)
		}
	}
}

// wsTerminal is a Terminal on a websocket.
type wsTerminal struct {
	c   *websocket.Conn
	ctx context.Context
	mu  sync.Mutex
}

// Send writes f, bounded in time.
func (t *wsTerminal) Send(f Frame) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx, cancel := context.WithTimeout(t.ctx, 10*time.Second)
	defer cancel()
	return wsjson.Write(ctx, t.c, f)
}

// Close tells the terminal why and ends the connection.
func (t *wsTerminal) Close(reason string) {
	_ = t.Send(Frame{Type: FrameDetached, Error: reason})
	_ = t.c.Close(websocket.StatusNormalClosure, "detached")
}
