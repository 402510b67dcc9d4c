package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Default platform endpoints, as the plugins' api_endpoint defaults.
const (
	TelegramAPI = "https://api.telegram.org/bot%s/%s"
	DiscordAPI  = "https://discord.com"
)

// ErrBadToken is a token the platform refused (401, 404 or Telegram's
// ok=false): ask for it again.
var ErrBadToken = errors.New("the platform refused this token")

// TelegramBot is what getMe says of a bot.
type TelegramBot struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Name     string `json:"first_name"`
}

// CheckTelegram asks Telegram's getMe which bot token is. endpoint is a
// format with two %s (token, method), the telegram plugin's api_endpoint.
// The token never appears in an error.
func CheckTelegram(ctx context.Context, client *http.Client, endpoint, token string) (TelegramBot, error) {
	var resp struct {
		OK          bool        `json:"ok"`
		Result      TelegramBot `json:"result"`
		Description string      `json:"description"`
	}
	if strings.TrimSpace(token) == "" || strings.ContainsAny(token, "/?# ") {
		return TelegramBot{}, ErrBadToken
	}
	code, err := getJSON(ctx, client, fmt.Sprintf(endpoint, token, "getMe"), nil, &resp)
	if err != nil {
		return TelegramBot{}, fmt.Errorf("telegram getMe: %s", redactToken(err.Error(), token))
	}
	if code == http.StatusUnauthorized || code == http.StatusNotFound || (code < 300 && !resp.OK) {
		return TelegramBot{}, ErrBadToken
	}
	if code >= 300 || resp.Result.Username == "" {
		return TelegramBot{}, fmt.Errorf("telegram getMe: HTTP %d %s", code, resp.Description)
	}
	return resp.Result, nil
}

// DiscordBot is what Discord says of a bot and its application.
type DiscordBot struct {
	ID       string
	Username string
	// MessageContent reports whether the application has the message
	// content intent (its flags GATEWAY_MESSAGE_CONTENT or _LIMITED): without
	// it the bot sees no text in servers.
	MessageContent bool
}

// Discord application flags of the message content intent.
const (
	flagMessageContent        = 1 << 19
	flagMessageContentLimited = 1 << 18
)

// CheckDiscord asks Discord who a bot token is (GET /users/@me) and
// whether its application has the message content intent (GET
// /applications/@me, its flags). base is the discord plugin's
// api_endpoint (REST under base/api/v9).
func CheckDiscord(ctx context.Context, client *http.Client, base, token string) (DiscordBot, error) {
	if strings.TrimSpace(token) == "" {
		return DiscordBot{}, ErrBadToken
	}
	hdr := http.Header{"Authorization": {"Bot " + token}}
	api := strings.TrimSuffix(base, "/") + "/api/v9"
	var me struct {
		ID       string `json:"id"`
		Username string `json:"username"`
	}
	code, err := getJSON(ctx, client, api+"/users/@me", hdr, &me)
	if err != nil {
		return DiscordBot{}, fmt.Errorf("discord users/@me: %s", redactToken(err.Error(), token))
	}
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		return DiscordBot{}, ErrBadToken
	}
	if code >= 300 || me.ID == "" {
		return DiscordBot{}, fmt.Errorf("discord users/@me: HTTP %d", code)
	}
	var app struct {
		Flags int64 `json:"flags"`
	}
	code, err = getJSON(ctx, client, api+"/applications/@me", hdr, &app)
	if err != nil {
		return DiscordBot{}, fmt.Errorf("discord applications/@me: %s", redactToken(err.Error(), token))
	}
	if code >= 300 {
		return DiscordBot{}, fmt.Errorf("discord applications/@me: HTTP %d", code)
	}
	return DiscordBot{ID: me.ID, Username: me.Username, MessageContent: app.Flags&(flagMessageContent|flagMessageContentLimited) != 0}, nil
}

// getJSON GETs url and decodes a JSON body into v (also on an error
// status, where the platform explains itself); it returns the status.
func getJSON(ctx context.Context, client *http.Client, url string, hdr http.Header, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	_ = json.Unmarshal(body, v) // a non-JSON answer leaves v empty; the status says more
	return resp.StatusCode, nil
}

// redactToken removes token from s (a URL in a transport error holds it).
func redactToken(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "<token>")
}
