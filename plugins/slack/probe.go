package slack

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// IDForms are how operators write a Slack id in clawhost's config: a
// member id (U…, W… on Enterprise Grid), a conversation id (C… channel,
// G… private channel, D… DM), a mention as Slack's client copies it
// (<@U…>, <#C…|name>), a message link (…/archives/C…/p1700000000000100:
// that thread), or C…:<thread_ts> for a thread.
var IDForms = []channel.IDForm{
	{Pattern: `<@([UW][A-Z0-9]+)(?:\|[^>]*)?>`, Canonical: "$1", Hint: "a mention such as <@U0123ABCD>"},
	{Pattern: `<#([CG][A-Z0-9]+)(?:\|[^>]*)?>`, Canonical: "$1", Hint: "a channel mention such as <#C0123ABCD|general>"},
	{Pattern: `https://[^/]+/archives/([CGD][A-Z0-9]+)/p([0-9]{10})([0-9]{6})(?:\?.*)?`, Canonical: "$1:$2.$3",
		Hint: "a message link (Copy link): its thread"},
	{Pattern: `https://[^/]+/archives/([CGD][A-Z0-9]+)/?`, Canonical: "$1", Hint: "a channel link"},
	{Pattern: `[CGD][A-Z0-9]{2,}:[0-9]+\.[0-9]+`, Hint: "a thread: C0123ABCD:1700000000.000100 (the channel id and the thread's ts)"},
	{Pattern: `[UWCGD][A-Z0-9]{2,}`,
		Hint: "Slack ids are upper-case letters and digits: U… for a member (profile → ⋮ → Copy member ID, or /whoami), C… or G… for a channel, D… for a DM"},
}

// Scopes are the bot scopes the plugin uses; the manifest (Manifest)
// grants them all.
var Scopes = []string{
	"app_mentions:read", "channels:history", "channels:read", "chat:write", "commands", "files:read", "files:write",
	"groups:history", "groups:read", "im:history", "im:read", "im:write", "mpim:history", "mpim:read",
	"reactions:write", "users:read",
}

// requiredScopes are those without which the channel does not work at
// all (direct messages in and out); the others cost a feature.
var requiredScopes = []string{"chat:write", "im:history"}

// scopeFeature says what a missing optional scope costs.
var scopeFeature = map[string]string{
	"app_mentions:read": "mentions in channels", "channels:history": "messages in public channels",
	"groups:history": "messages in private channels", "mpim:history": "group DMs", "channels:read": "channel names",
	"groups:read": "private channel names", "im:read": "DM details", "mpim:read": "group DM details", "im:write": "opening DMs",
	"files:read": "files people send", "files:write": "files the agent sends", "reactions:write": "the seen 👀 reaction",
	"users:read": "people's names", "commands": "the slash command",
}

// probeTimeout bounds each call of the probe.
const probeTimeout = 10 * time.Second

// Probe is sdk.Plugin.Probe: auth.test tells who the bot token's bot is
// and (in the X-OAuth-Scopes header) which scopes the app was granted;
// apps.connections.open checks the app-level token in socket mode (the
// URL it hands out is never dialled). Nothing is posted anywhere.
func Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	c, err := decodeConfig(cfg)
	if err != nil {
		var raw Config
		_ = cfg.Decode(&raw)
		if strings.TrimSpace(raw.BotToken) == "" {
			rep.Checks = append(rep.Checks, probe.Check{Name: "bot token", Verdict: probe.Fail, Found: "no bot_token in the config block",
				Do: "install the app to the workspace and copy the Bot User OAuth Token (xoxb-…, OAuth & Permissions) into bot_token"})
			return rep, nil
		}
		return rep, err
	}
	api := newClient(c, &http.Client{Transport: http.DefaultTransport})
	actx, cancel := context.WithTimeout(ctx, probeTimeout)
	me, err := api.AuthTestContext(actx)
	cancel()
	if err != nil {
		v, do := probe.Warn, "check the network (and api_endpoint) and try again"
		if fatal(err) != "" {
			v, do = probe.Fail, "copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page into bot_token (reinstall the app if it was revoked)"
		}
		rep.Checks = append(rep.Checks, probe.Check{Name: "bot token", Verdict: v, Found: "auth.test: " + probeErr(err), Do: do})
		return rep, nil
	}
	rep.Identity = probe.Identity{ID: me.UserID, Handle: "@" + me.User, Name: me.User, Link: me.URL}
	rep.Checks = append(rep.Checks, probe.Check{Name: "bot token", Verdict: probe.OK, Found: "Slack accepts the bot token: the bot is @" + me.User + " in " + me.Team})
	rep.Checks = append(rep.Checks, scopeCheck(me.Header.Get("X-OAuth-Scopes")))
	if c.Mode == ModeSocket {
		actx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, _, err := api.StartSocketModeContext(actx)
		cancel()
		switch {
		case err == nil:
			rep.Checks = append(rep.Checks, probe.Check{Name: "app token", Verdict: probe.OK, Found: "Slack opens Socket Mode connections for the app-level token"})
		case code(err) == "missing_scope":
			rep.Checks = append(rep.Checks, probe.Check{Name: "app token", Verdict: probe.Fail, Found: "apps.connections.open: missing_scope connections:write",
				Do: "generate the app-level token with the scope connections:write (Basic Information → App-Level Tokens)"})
		case fatal(err) != "":
			rep.Checks = append(rep.Checks, probe.Check{Name: "app token", Verdict: probe.Fail, Found: "apps.connections.open: " + probeErr(err),
				Do: "copy the app-level token (xapp-…, Basic Information → App-Level Tokens) into app_token, and turn Socket Mode on (Settings → Socket Mode)"})
		default:
			rep.Checks = append(rep.Checks, probe.Check{Name: "app token", Verdict: probe.Warn, Found: "apps.connections.open: " + probeErr(err),
				Do: "turn Socket Mode on (Settings → Socket Mode) and try again"})
		}
	}
	return rep, nil
}

// scopeCheck judges the granted scopes (auth.test's X-OAuth-Scopes).
func scopeCheck(header string) probe.Check {
	if strings.TrimSpace(header) == "" {
		return probe.Check{Name: "scopes", Verdict: probe.Warn, Found: "Slack did not say which scopes the app has",
			Do: "compare the app's scopes (OAuth & Permissions) with the manifest in docs/slack.md"}
	}
	granted := map[string]bool{}
	for _, s := range strings.Split(header, ",") {
		granted[strings.TrimSpace(s)] = true
	}
	var missing, fatalMissing []string
	for _, s := range Scopes {
		if !granted[s] {
			missing = append(missing, s)
			if slices.Contains(requiredScopes, s) {
				fatalMissing = append(fatalMissing, s)
			}
		}
	}
	if len(missing) == 0 {
		return probe.Check{Name: "scopes", Verdict: probe.OK, Found: "the app has every scope clawhost uses"}
	}
	var costs []string
	for _, s := range missing {
		costs = append(costs, s+" ("+scopeFeature[s]+")")
	}
	chk := probe.Check{Name: "scopes", Verdict: probe.Warn, Found: "missing_scope: " + strings.Join(costs, ", "),
		Do: "add the scopes under OAuth & Permissions (or paste the manifest of docs/slack.md) and reinstall the app"}
	if len(fatalMissing) > 0 {
		chk.Verdict = probe.Fail
	}
	return chk
}

// probeErr is an error of the probe without anything secret.
func probeErr(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		if se.Needed != "" {
			return se.Err + " " + se.Needed
		}
		return se.Err
	}
	return transportText(err)
}
