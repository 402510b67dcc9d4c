package webchat_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestConformance runs the sdk's channel conformance suite over a real
// gRPC connection; the platform is a Go WebSocket client playing the page.
func TestConformance(t *testing.T) {
	var (
		mu      sync.Mutex
		adapter *webchat.Adapter
		client  *webchattest.Client
		n       int
	)
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			p := webchat.Plugin()
			mu.Lock()
			adapter, client = p.Channel.(*webchat.Adapter), nil
			mu.Unlock()
			return p
		},
		Config: []byte(`{"listen":"127.0.0.1:0"}`),
		Inject: func(t *testing.T, text string) string {
			mu.Lock()
			defer mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if client == nil {
				c, err := webchattest.NewClient(ctx, adapter.Link())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Connect(context.Background()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(c.Close)
				client = c
			}
			n++
			if err := client.Send(ctx, fmt.Sprint("conf", n), text); err != nil {
				t.Fatal(err)
			}
			return client.SenderID()
		},
	})
}
