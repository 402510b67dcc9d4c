package matrix

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance drives the plugin over real gRPC (sdktest) against a
// real homeserver: Alice writes in her DM with the bot.
func TestConformance(t *testing.T) {
	h, ctx := startHS(t)
	alice := h.srv.Client(h.alice)
	dm := h.joinedDM(t, ctx, alice)
	cfg, _ := json.Marshal(h.botConfig(h.srv.URL, false))
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New:           func(t *testing.T) sdk.Plugin { return Plugin() },
		Config:        cfg,
		UnknownChatID: "!unknown:localhost",
		Timeout:       20 * time.Second,
		Inject: func(t *testing.T, text string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := alice.SendText(ctx, dm.RoomID, text); err != nil {
				t.Fatal(err)
			}
			return dm.RoomID.String()
		},
	})
}
