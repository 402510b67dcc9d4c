package core

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/config"
)

// The platforms' API addresses when a config block names none. They are
// the plugins' defaults (plugins/telegram, plugins/discord), repeated
// here: the core does not import plugins.
const (
	telegramAPI = "https://api.telegram.org/bot%s/%s"
	discordAPI  = "https://discord.com"
	// whatsappDB is the WhatsApp plugin's database in its data directory.
	whatsappDB = "whatsapp.db"
	// Discord's application flags for the Message Content intent.
	discordMessageContent        = 1 << 18
	discordMessageContentLimited = 1 << 19
)

// doctorChannels asks each enabled channel's platform whether it takes the
// credentials of the config block, as the plugin would at its start:
// Telegram's getMe with the token; Discord's GET /users/@me with the token
// and, when message_content is on, whether the application has the
// Message Content intent (GET /applications/@me, its flags: without it the
// gateway refuses the bot); WhatsApp has no token, so whether a phone
// linked the plugin's session (its device store in
// <data_dir>/plugins/<instance>). Nothing is sent to a chat. A platform
// that cannot be reached is a warning, a refusal a failure. The token
// never appears in what is reported.
func doctorChannels(ctx context.Context, cfg *config.Config) []DoctorCheck {
	var out []DoctorCheck
	for _, p := range cfg.EnabledPlugins() {
		str := func(name, def string) string {
			if v, ok := cfg.StringValue(cfg.Attribute("plugin", p.Name, "config", name)); ok && v != "" {
				return v
			}
			return def
		}
		name := fmt.Sprintf("channel %q (%s)", p.Name, p.Source)
		var c DoctorCheck
		switch p.Source {
		case "telegram":
			c = telegramToken(ctx, str("api_endpoint", telegramAPI), str("token", ""))
		case "discord":
			content, ok := cfg.BoolValue(cfg.Attribute("plugin", p.Name, "config", "message_content"))
			if !ok {
				content = true // the plugin's default
			}
			c = discordToken(ctx, str("api_endpoint", discordAPI), str("token", ""), content)
		case "whatsapp":
			c = whatsappLinked(ctx, filepath.Join(cfg.DataDir, "plugins", p.Name, whatsappDB))
		default:
			continue
		}
		c.Name = name
		out = append(out, c)
	}
	return out
}

// platformGet GETs u with header h (may be nil) and decodes a 200 answer's
// JSON into v. It returns the status (0 when there was no answer) and an
// error that never holds u: a Telegram URL holds the token.
func platformGet(ctx context.Context, u string, h http.Header, v any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, errors.New("invalid api_endpoint")
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return resp.StatusCode, fmt.Errorf("%s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("unexpected answer: %w", err)
	}
	return resp.StatusCode, nil
}

// telegramToken asks Telegram's getMe who the token's bot is.
func telegramToken(ctx context.Context, endpoint, token string) DoctorCheck {
	if token == "" {
		return DoctorCheck{Verdict: VerdictFail, Found: "no token in the config block", Do: "set token (from @BotFather)"}
	}
	var me struct {
		OK     bool `json:"ok"`
		Result struct {
			Username string `json:"username"`
		} `json:"result"`
	}
	code, err := platformGet(ctx, fmt.Sprintf(endpoint, token, "getMe"), nil, &me)
	switch {
	case code == http.StatusUnauthorized || code == http.StatusNotFound:
		return DoctorCheck{Verdict: VerdictFail, Found: "Telegram refused the token (getMe: " + err.Error() + ")",
			Do: "copy the bot's token again from @BotFather (/mybots → API Token); a token revoked there stops working"}
	case err != nil:
		return DoctorCheck{Verdict: VerdictWarn, Found: "could not ask Telegram (getMe): " + err.Error(), Do: "check the network (or a proxy in the plugin's env) and run doctor again"}
	case !me.OK:
		return DoctorCheck{Verdict: VerdictFail, Found: "Telegram answered getMe with ok=false", Do: "check the token with @BotFather"}
	}
	return DoctorCheck{Verdict: VerdictOK, Found: "Telegram accepts the token: the bot is @" + me.Result.Username + " (getMe)"}
}

// discordToken asks Discord who the token's bot is and, when the plugin
// asks for message content, whether the application may have it.
func discordToken(ctx context.Context, endpoint, token string, content bool) DoctorCheck {
	if token == "" {
		return DoctorCheck{Verdict: VerdictFail, Found: "no token in the config block", Do: "set token (Developer Portal → your application → Bot → Reset Token)"}
	}
	api := strings.TrimRight(endpoint, "/") + "/api/v9"
	auth := http.Header{"Authorization": {"Bot " + token}}
	var me struct {
		Username string `json:"username"`
	}
	code, err := platformGet(ctx, api+"/users/@me", auth, &me)
	switch {
	case code == http.StatusUnauthorized:
		return DoctorCheck{Verdict: VerdictFail, Found: "Discord refused the token (GET /users/@me: " + err.Error() + ")",
			Do: "reset the bot's token in the Developer Portal (your application → Bot → Reset Token) and put the new one in the config block"}
	case err != nil:
		return DoctorCheck{Verdict: VerdictWarn, Found: "could not ask Discord (GET /users/@me): " + err.Error(), Do: "check the network and run doctor again"}
	}
	if !content {
		return DoctorCheck{Verdict: VerdictOK, Found: "Discord accepts the token: the bot is " + me.Username + " (message_content = false: no intent needed)"}
	}
	var app struct {
		Flags int `json:"flags"`
	}
	if _, err := platformGet(ctx, api+"/applications/@me", auth, &app); err != nil {
		return DoctorCheck{Verdict: VerdictWarn, Found: "Discord accepts the token (the bot is " + me.Username + "); its intents could not be read (GET /applications/@me: " + err.Error() + ")",
			Do: "check that Message Content Intent is on in the Developer Portal (Bot → Privileged Gateway Intents)"}
	}
	if app.Flags&(discordMessageContent|discordMessageContentLimited) == 0 {
		return DoctorCheck{Verdict: VerdictFail, Found: "Discord accepts the token (the bot is " + me.Username + ") but the Message Content intent is off: the gateway refuses the bot",
			Do: "turn on Message Content Intent in the Developer Portal (your application → Bot → Privileged Gateway Intents), or set message_content = false (then the bot reads only mentions and DMs)"}
	}
	return DoctorCheck{Verdict: VerdictOK, Found: "Discord accepts the token: the bot is " + me.Username + ", with the Message Content intent"}
}

// WhatsAppLinked reports whether a phone linked WhatsApp plugin instance
// name of cfg: its device store (<data_dir>/plugins/<name>) holds a
// device. It only reads. clawhost init asks before linking again.
func WhatsAppLinked(ctx context.Context, cfg *config.Config, name string) bool {
	return whatsappLinked(ctx, filepath.Join(cfg.DataDir, "plugins", name, whatsappDB)).Verdict == VerdictOK
}

// whatsappLinked reads, without writing, whether the WhatsApp plugin's
// device store at path holds a linked device.
func whatsappLinked(ctx context.Context, path string) DoctorCheck {
	notYet := DoctorCheck{Verdict: VerdictWarn, Found: "no phone linked yet (" + path + ")",
		Do: "start clawhost and scan the QR code on the status page or in clawhost status with WhatsApp on the phone (Settings → Linked devices → Link a device)"}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return notYet
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return DoctorCheck{Verdict: VerdictWarn, Found: "cannot read " + path + ": " + err.Error(), Do: "run doctor as the user the plugin runs as"}
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM whatsmeow_device").Scan(&n); err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return notYet
		}
		return DoctorCheck{Verdict: VerdictWarn, Found: "cannot read " + path + ": " + err.Error(), Do: "run doctor as the user the plugin runs as"}
	}
	if n == 0 {
		return notYet
	}
	return DoctorCheck{Verdict: VerdictOK, Found: "a phone linked this device (" + path + ")"}
}
