package telegram

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestProbe: the probe asks the fake Bot API's getMe with the block's
// token: the bot's identity and a t.me link when Telegram accepts it, a
// failure saying what to do when it refuses it, a warning when Telegram
// cannot be reached; the token never appears in the report.
func TestProbe(t *testing.T) {
	t.Parallel()
	srv := telegramtest.NewServer(testToken)
	t.Cleanup(srv.Close)
	deadAddr := sdktest.FreeAddr(t)
	for _, tc := range []struct {
		name, token, endpoint string
		want                  probe.Verdict
		handle                string
	}{
		{"accepted", testToken, srv.APIEndpoint(), probe.OK, "@clawbot"},
		{"refused", "123:WRONG" + strings.Repeat("x", 30), srv.APIEndpoint(), probe.Fail, ""},
		{"unreachable", testToken, "http://" + deadAddr + "/bot%s/%s", probe.Warn, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			js := fmt.Sprintf(`{"token":%q,"api_endpoint":%q}`, tc.token, tc.endpoint)
			rep, err := Probe(context.Background(), schema.Config{Instance: "tg", JSON: []byte(js)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Worst() != tc.want || rep.Identity.Handle != tc.handle {
				t.Fatalf("report %+v, want %s and handle %q", rep, tc.want, tc.handle)
			}
			if tc.want == probe.OK && (rep.Identity.ID != "999" || rep.Identity.Link != "https://t.me/clawbot") {
				t.Errorf("identity %+v", rep.Identity)
			}
			if tc.want != probe.OK && rep.Checks[0].Do == "" {
				t.Errorf("a %s check without what to do: %+v", tc.want, rep.Checks[0])
			}
			if s := fmt.Sprint(rep); strings.Contains(s, tc.token) {
				t.Errorf("the token is in the report: %s", s)
			}
		})
	}
}
