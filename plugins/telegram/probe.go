package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// IDForms are how operators write a Telegram id in clawhost's config: a
// number (a group's is negative). @usernames never reach the bot as ids.
var IDForms = []channel.IDForm{{
	Pattern: `-?[0-9]+`,
	Hint:    "Telegram ids are numbers (a group's is negative), never @usernames: /whoami tells a sender their id",
}}

// Probe is sdk.Plugin.Probe: it asks Telegram's getMe who the token's bot
// is. A refused token fails; a Telegram that cannot be reached warns (the
// token may be fine). Nothing is sent to any chat, no webhook is touched.
func Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	c, err := decodeConfig(cfg)
	if err != nil {
		var d schema.Diagnostics
		if errors.As(err, &d) && c.Token == "" {
			rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Fail, Found: "no token in the config block", Do: "set token (from @BotFather)"})
			return rep, nil
		}
		return rep, err
	}
	api := &client{token: c.Token, apiEndpoint: c.APIEndpoint, fileEndpoint: c.FileEndpoint, http: &http.Client{}}
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	raw, err := api.call(cctx, "getMe", nil)
	var ae *apiError
	switch {
	case errors.As(err, &ae) && (ae.Code == http.StatusUnauthorized || ae.Code == http.StatusNotFound):
		rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Fail, Found: "Telegram refused the token (" + ae.Error() + ")",
			Do: "copy the bot's token again from @BotFather (/mybots → API Token); a token revoked there stops working"})
		return rep, nil
	case err != nil:
		rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Warn, Found: "could not ask Telegram: " + err.Error(),
			Do: "check the network (or a proxy in the plugin's env) and try again"})
		return rep, nil
	}
	var me struct {
		ID        int64  `json:"id"`
		Username  string `json:"username"`
		FirstName string `json:"first_name"`
	}
	if err := json.Unmarshal(raw, &me); err != nil || me.ID == 0 {
		rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.Warn, Found: "Telegram's getMe answer could not be read", Do: "check api_endpoint and try again"})
		return rep, nil
	}
	rep.Identity = probe.Identity{ID: strconv.FormatInt(me.ID, 10), Handle: "@" + me.Username, Name: me.FirstName, Link: "https://t.me/" + me.Username}
	rep.Checks = append(rep.Checks, probe.Check{Name: "token", Verdict: probe.OK, Found: "Telegram accepts the token: the bot is @" + me.Username})
	return rep, nil
}
