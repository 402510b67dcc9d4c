package webchattest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"

	"github.com/coder/websocket"

	"github.com/clawhost/clawhost/plugins/webchat"
)

// Client is one browser as the plugin sees it: a cookie jar with its
// identity, and one WebSocket.
type Client struct {
	// HTTP is the client with the browser's cookies.
	HTTP *http.Client
	// Conn is the open WebSocket; nil until Connect.
	Conn *websocket.Conn
	base *url.URL
}

// NewClient loads the page at pageURL (which may carry ?token=), keeping
// the cookies it sets, like a browser's first visit.
func NewClient(ctx context.Context, pageURL string) (*Client, error) {
	u, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	c := &Client{HTTP: &http.Client{Jar: jar}, base: u}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return nil, fmt.Errorf("new client: %w", err)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("new client: load page: %w", err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("new client: load page: %s", res.Status)
	}
	return c, nil
}

// SenderID is the sender (and chat) id the plugin gives this client.
func (c *Client) SenderID() string {
	for _, k := range c.HTTP.Jar.Cookies(c.base) {
		if k.Name == webchat.IdentityCookie {
			return webchat.SenderID(k.Value)
		}
	}
	return ""
}

// Connect opens the WebSocket (closing an open one) and returns the hello.
func (c *Client) Connect(ctx context.Context) (webchat.Event, error) {
	if c.Conn != nil {
		_ = c.Conn.CloseNow()
	}
	ws := *c.base
	ws.Scheme = strings.Replace(ws.Scheme, "http", "ws", 1)
	ws.Path, ws.RawQuery = "/ws", ""
	origin := c.base.Scheme + "://" + c.base.Host
	conn, _, err := websocket.Dial(ctx, ws.String(), &websocket.DialOptions{
		HTTPClient: c.HTTP,
		HTTPHeader: http.Header{"Origin": {origin}},
	})
	if err != nil {
		return webchat.Event{}, fmt.Errorf("connect: %w", err)
	}
	conn.SetReadLimit(1 << 24)
	c.Conn = conn
	ev, err := c.Next(ctx)
	if err != nil {
		return ev, err
	}
	if ev.Type != webchat.EventHello {
		return ev, fmt.Errorf("connect: first event is %q, want hello", ev.Type)
	}
	return ev, nil
}

// Send sends text as the user's message with the given client id.
func (c *Client) Send(ctx context.Context, clientID, text string) error {
	b, err := json.Marshal(webchat.ClientFrame{Type: webchat.FrameSend, ClientID: clientID, Text: text})
	if err != nil {
		return err
	}
	if err := c.Conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// Press presses button buttonID under message messageID.
func (c *Client) Press(ctx context.Context, clientID, messageID, buttonID string) error {
	b, err := json.Marshal(webchat.ClientFrame{Type: webchat.FramePress, ClientID: clientID, MessageID: messageID, ButtonID: buttonID})
	if err != nil {
		return err
	}
	if err := c.Conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("press: %w", err)
	}
	return nil
}

// Upload posts a file named name with data, and text, from the page as its
// file picker does, and returns the answer's status and JSON body (the
// message's "id", or the "error").
func (c *Client) Upload(ctx context.Context, name string, data []byte, text string) (int, map[string]string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("text", text)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		return 0, nil, fmt.Errorf("upload: %w", err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	u := *c.base
	u.Path, u.RawQuery = "/upload", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), &body)
	if err != nil {
		return 0, nil, fmt.Errorf("upload: %w", err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("upload: %w", err)
	}
	defer res.Body.Close()
	var out map[string]string
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out, nil
}

// Next reads the next event.
func (c *Client) Next(ctx context.Context) (webchat.Event, error) {
	_, b, err := c.Conn.Read(ctx)
	if err != nil {
		return webchat.Event{}, fmt.Errorf("next event: %w", err)
	}
	var ev webchat.Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return ev, fmt.Errorf("next event: %w", err)
	}
	return ev, nil
}

// NextOf reads events until one of type typ and returns it.
func (c *Client) NextOf(ctx context.Context, typ string) (webchat.Event, error) {
	for {
		ev, err := c.Next(ctx)
		if err != nil || ev.Type == typ {
			return ev, err
		}
	}
}

// Close closes the WebSocket.
func (c *Client) Close() {
	if c.Conn != nil {
		_ = c.Conn.CloseNow()
	}
}
