package slack_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/slack"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance drives the plugin over real gRPC (sdktest) against the
// fake Slack.
func TestConformance(t *testing.T) {
	srv := slacktest.NewServer("xoxb-conformance", "xapp-conformance")
	t.Cleanup(srv.Close)
	cfg, _ := json.Marshal(map[string]any{"bot_token": "xoxb-conformance", "app_token": "xapp-conformance", "api_endpoint": srv.Endpoint()})
	user := slacktest.User{ID: "U0000A", Name: "alice"}
	dm := srv.AddDM(user)
	connected := 0
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			// Each sub-test is a fresh plugin: what the last one left
			// unacknowledged is not this one's.
			srv.Forget()
			connected = srv.Connected()
			return slack.Plugin()
		},
		Config:        cfg,
		UnknownChatID: "C0UNKNOWN",
		Inject: func(t *testing.T, text string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.WaitConnected(ctx, connected+1); err != nil {
				t.Fatal(err)
			}
			srv.Post(slacktest.Message{Channel: dm.ID, User: user.ID, Text: text})
			return dm.ID
		},
	})
}
