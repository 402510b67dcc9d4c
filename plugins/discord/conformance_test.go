package discord_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/discord"
	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance drives the plugin over real gRPC (sdktest) against the
// fake Discord.
func TestConformance(t *testing.T) {
	srv := discordtest.NewServer("CONFORMANCE.token.x")
	t.Cleanup(srv.Close)
	cfg, _ := json.Marshal(map[string]any{"token": srv.Token(), "api_endpoint": srv.Endpoint()})
	user := discordtest.User{ID: "100000000000000101", Username: "alice"}
	dm := srv.AddDM(user)
	identifies := 0
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			identifies = srv.Identifies()
			return discord.Plugin()
		},
		Config: cfg,
		Inject: func(t *testing.T, text string) string {
			// Each sub-test is a fresh plugin with a fresh data dir: it
			// identifies anew, and a message sent before that would go to
			// the previous session.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := srv.WaitLive(ctx, identifies+srv.Resumes()+1); err != nil {
				t.Fatal(err)
			}
			srv.Push(discordtest.Message{ChannelID: dm.ID, Author: user, Content: text})
			return dm.ID
		},
	})
}
