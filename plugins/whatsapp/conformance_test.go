package whatsapp_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/whatsapp"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

// linker plays the phone for the conformance suite: it sees the plugin's
// status reports (wrapped around the sdk's reporter) and scans each QR
// code it shows.
type linker struct {
	next   status.Reporter
	srv    *whatsapptest.Server
	mu     sync.Mutex
	ready  chan struct{}
	paired bool
}

func (l *linker) Report(st status.Status) {
	l.next.Report(st)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case st.State == status.NeedsAttention && st.Attention != nil && st.Attention.Kind == status.QR && !l.paired:
		l.paired = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_ = l.srv.PairQR(ctx, st.Attention.Data)
		}()
	case st.State == status.Ready:
		select {
		case <-l.ready:
		default:
			close(l.ready)
		}
	}
}

// TestConformance drives the plugin over real gRPC (sdktest) against the
// fake WhatsApp; each sub-test is a fresh plugin with a fresh data dir,
// linked anew by QR.
func TestConformance(t *testing.T) {
	srv, err := whatsapptest.New(whatsapptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ann, err := srv.AddContact(whatsapptest.ContactOptions{Phone: "15550007777", LID: "200000000000007", Name: "Ann"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"server_address": srv.Addr(), "server_root_key": srv.RootKeyHex(),
		"pacing": map[string]string{"min": "0s", "max": "0s"}, "read_receipts": false})
	var current *linker
	sdktest.Conformance(t, sdktest.ConformanceConfig{
		New: func(t *testing.T) sdk.Plugin {
			p := whatsapp.Plugin()
			configure := p.Configure
			l := &linker{srv: srv, ready: make(chan struct{})}
			current = l
			p.Configure = func(ctx context.Context, c schema.Config) error {
				l.next = c.Status
				c.Status = l
				return configure(ctx, c)
			}
			return p
		},
		Config:  cfg,
		Timeout: 30 * time.Second,
		Inject: func(t *testing.T, text string) string {
			select {
			case <-current.ready:
			case <-time.After(30 * time.Second):
				t.Fatal("the plugin did not link and connect")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := ann.SendText(ctx, whatsapptest.TextOptions{Text: text}); err != nil {
				t.Fatal(err)
			}
			return "+15550007777"
		},
	})
}
