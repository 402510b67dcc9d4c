package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// IDForms are how operators write a Discord id in clawhost's config: a
// snowflake, or a mention of a user or channel (<@123>, <@!123>, <#123>)
// as Discord's client copies it, which is the snowflake inside.
var IDForms = []channel.IDForm{
	{Pattern: `<(?:@!?|#)([0-9]+)>`, Canonical: "$1", Hint: "a mention such as <@123>"},
	{Pattern: `[0-9]+`, Hint: "Discord ids are numbers (snowflakes): turn on Developer Mode and use Copy ID, or /whoami"},
}

// InvitePermissions are the permissions the invite link asks for (view
// channels, send messages and in threads, create public threads, embed
// links, attach files, read history, add reactions, use application
// commands): docs/discord.md lists the same.
const InvitePermissions = "309237763072"

// Discord's application flags for the Message Content intent (the second
// below 100 servers).
const (
	flagMessageContent        = 1 << 18
	flagMessageContentLimited = 1 << 19
)

// probeTimeout bounds each call of the probe.
const probeTimeout = 10 * time.Second

// Probe is sdk.Plugin.Probe: GET /users/@me tells who the token's bot is;
// GET /applications/@me its application (for the invite link) and, when
// message_content is on, whether the Message Content intent is enabled —
// without it the gateway refuses the bot. Nothing is sent to any channel,
// no gateway connection is made.
func Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	c, err := decodeConfig(cfg)
	if err != nil {
		if c.Token == "" {
			rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Fail, Found: "no token in the config block",
				Do: "set token (Developer Portal → your application → Bot → Reset Token)"})
			return rep, nil
		}
		return rep, err
	}
	api := c.APIEndpoint + "/api/v9"
	auth := http.Header{"Authorization": {"Bot " + c.Token}}
	var me struct {
		ID       string `json:"id"`
		Username string `json:"username"`
		Global   string `json:"global_name"`
	}
	code, err := get(ctx, api+"/users/@me", auth, &me)
	switch {
	case code == http.StatusUnauthorized:
		rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Fail, Found: "Discord refused the token (GET /users/@me: " + err.Error() + ")",
			Do: "reset the bot's token in the Developer Portal (your application → Bot → Reset Token) and put the new one in the config block"})
		return rep, nil
	case err != nil:
		rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Warn, Found: "could not ask Discord (GET /users/@me): " + err.Error(), Do: "check the network and try again"})
		return rep, nil
	}
	rep.Identity = probe.Identity{ID: me.ID, Handle: me.Username, Name: me.Global}
	if rep.Identity.Name == "" {
		rep.Identity.Name = me.Username
	}
	rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.OK, Found: "Discord accepts the token: the bot is " + me.Username})
	var app struct {
		ID    string `json:"id"`
		Flags int    `json:"flags"`
	}
	if _, err := get(ctx, api+"/applications/@me", auth, &app); err != nil {
		rep.Checks = append(rep.Checks, probe.Check{Name: "message content intent", Verdict: probe.Warn,
			Found: "the application could not be read (GET /applications/@me: " + err.Error() + ")",
			Do:    "check that Message Content Intent is on in the Developer Portal (Bot → Privileged Gateway Intents)"})
		return rep, nil
	}
	if app.ID != "" {
		rep.Identity.Link = "https://discord.com/oauth2/authorize?client_id=" + url.QueryEscape(app.ID) + "&scope=bot+applications.commands&permissions=" + InvitePermissions
	}
	switch {
	case !*c.MessageContent:
		rep.Checks = append(rep.Checks, probe.Check{Name: "message content intent", Verdict: probe.OK, Found: "not needed: message_content = false (the bot reads mentions and direct messages only)"})
	case app.Flags&(flagMessageContent|flagMessageContentLimited) == 0:
		rep.Checks = append(rep.Checks, probe.Check{Name: "message content intent", Verdict: probe.Fail, Found: "the Message Content intent is off: the gateway refuses the bot",
			Do: "turn on Message Content Intent in the Developer Portal (your application → Bot → Privileged Gateway Intents), or set message_content = false (then the bot reads only mentions and DMs)"})
	default:
		rep.Checks = append(rep.Checks, probe.Check{Name: "message content intent", Verdict: probe.OK, Found: "the Message Content intent is on"})
	}
	return rep, nil
}

// get GETs u with header h and decodes a 200 answer's JSON into v. It
// returns the status (0 when there was no answer) and an error that never
// holds the token.
func get(ctx context.Context, u string, h http.Header, v any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, errors.New("invalid api_endpoint")
	}
	req.Header = h.Clone()
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
		return resp.StatusCode, errors.New(resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("unexpected answer: %w", err)
	}
	return resp.StatusCode, nil
}
