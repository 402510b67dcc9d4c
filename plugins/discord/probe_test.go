package discord

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestProbe: the probe asks the fake Discord who the token's bot is and
// whether its application has the Message Content intent; the invite link
// names the application. A refused token and a missing intent fail with
// what to do, an unreachable Discord warns; the token never shows.
func TestProbe(t *testing.T) {
	t.Parallel()
	deadURL := "http://" + sdktest.FreeAddr(t)
	for _, tc := range []struct {
		name      string
		token     string
		noIntent  bool
		content   bool
		dead      bool
		want      probe.Verdict
		wantCheck string // the failing or warning check
	}{
		{name: "accepted", token: testToken, content: true, want: probe.OK},
		{name: "refused", token: "wrong-token", content: true, want: probe.Fail, wantCheck: "token"},
		{name: "no intent", token: testToken, noIntent: true, content: true, want: probe.Fail, wantCheck: "message content intent"},
		{name: "intent not needed", token: testToken, noIntent: true, want: probe.OK},
		{name: "unreachable", token: testToken, dead: true, content: true, want: probe.Warn, wantCheck: "token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := discordtest.NewServer(testToken)
			t.Cleanup(srv.Close)
			srv.SetMessageContentAllowed(!tc.noIntent)
			endpoint := srv.Endpoint()
			if tc.dead {
				endpoint = deadURL
			}
			js := fmt.Sprintf(`{"token":%q,"api_endpoint":%q,"message_content":%v}`, tc.token, endpoint, tc.content)
			rep, err := Probe(context.Background(), schema.Config{Instance: "dc", JSON: []byte(js)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Worst() != tc.want {
				t.Fatalf("report %+v, want %s", rep, tc.want)
			}
			for _, c := range rep.Checks {
				if c.Verdict != probe.OK && (c.Name != tc.wantCheck || c.Do == "") {
					t.Errorf("check %+v, want only %q to be %s, with what to do", c, tc.wantCheck, tc.want)
				}
			}
			if tc.want == probe.OK && (rep.Identity.ID != discordtest.BotID || rep.Identity.Handle != "clawbot" ||
				!strings.Contains(rep.Identity.Link, "client_id="+discordtest.AppID)) {
				t.Errorf("identity %+v", rep.Identity)
			}
			if strings.Contains(fmt.Sprint(rep), tc.token) {
				t.Errorf("the token is in the report: %+v", rep)
			}
		})
	}
}
