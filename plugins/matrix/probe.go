package matrix

import (
	"context"
	"errors"
	"net/http"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// probeTimeout bounds each call of the probe.
const probeTimeout = 10 * time.Second

// Probe is sdk.Plugin.Probe (clawhost init and doctor): /whoami with the
// access token, or a password login (its device logged out again at once)
// says whether the homeserver accepts the bot. Nothing is posted.
func Probe(ctx context.Context, cfg schema.Config) (probe.Report, error) {
	var rep probe.Report
	c, err := decodeConfig(cfg)
	if err != nil {
		return rep, err
	}
	cli, err := mautrix.NewClient(c.Homeserver, id.UserID(c.UserID), c.AccessToken)
	if err != nil {
		return rep, err
	}
	cli.Client = &http.Client{Transport: http.DefaultTransport}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	what := "access token"
	if c.AccessToken == "" {
		what = "password"
		_, err = cli.Login(ctx, &mautrix.ReqLogin{Type: mautrix.AuthTypePassword, Password: c.Password,
			Identifier: mautrix.UserIdentifier{Type: mautrix.IdentifierTypeUser, User: c.UserID}, StoreCredentials: true,
			InitialDeviceDisplayName: "clawhost init check"})
		if err == nil {
			defer func() { _, _ = cli.Logout(context.WithoutCancel(ctx)) }()
		}
	}
	var who *mautrix.RespWhoami
	if err == nil {
		who, err = cli.Whoami(ctx)
	}
	switch {
	case err == nil && who.UserID.String() != c.UserID:
		rep.Checks = append(rep.Checks, probe.Check{Name: what, Verdict: probe.Fail, Found: "the token is " + who.UserID.String() + "'s, not " + c.UserID + "'s",
			Do: "copy the bot account's own access token into access_token"})
	case err == nil:
		rep.Identity = probe.Identity{ID: c.UserID, Handle: c.UserID, Name: who.UserID.Localpart()}
		rep.Checks = append(rep.Checks, probe.Check{Name: what, Verdict: probe.OK, Found: c.Homeserver + " accepts the " + what + " of " + c.UserID})
		rep.Checks = append(rep.Checks, trustCheck(ctx, cli, c, cfg.DataDir))
	case refused(err) != "":
		rep.Checks = append(rep.Checks, probe.Check{Name: what, Verdict: probe.Fail, Found: probeErr(err), Do: refused(err)})
	default:
		rep.Checks = append(rep.Checks, probe.Check{Name: what, Verdict: probe.Warn, Found: probeErr(err),
			Do: "check homeserver (the client-server API's URL) and the network, and try again"})
	}
	return rep, nil
}

// probeErr is err without anything secret: the homeserver's error code
// and message, or the transport's failure.
func probeErr(err error) string {
	var he mautrix.HTTPError
	if errors.As(err, &he) && he.RespError != nil {
		return he.RespError.ErrCode + ": " + he.RespError.Err
	}
	var re mautrix.RespError
	if errors.As(err, &re) {
		return re.ErrCode + ": " + re.Err
	}
	return "the homeserver could not be reached"
}
