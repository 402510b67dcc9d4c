package setup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/qrcode"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/sdk/status"
)

// WhatsAppInstance is the name of the WhatsApp plugin block init writes;
// its device store is data_dir/plugins/wa.
const WhatsAppInstance = "wa"

// DefaultLinkTimeout bounds the wait for a phone to link WhatsApp.
const DefaultLinkTimeout = 5 * time.Minute

// PluginRunner runs the plugin instance of the configuration file alone,
// as clawhost run would (pluginprobe.RunAlone), calling watch with each
// change of its status until watch returns done or an error, or ctx ends.
// retry asks the plugin to try again what its Attention.Retry names.
type PluginRunner func(ctx context.Context, configFile, instance string,
	watch func(st pluginhost.Status, retry func(context.Context) error) (done bool, err error)) error

// LinkedCheck reports whether a phone already linked the WhatsApp plugin
// instance of the configuration file (the cli asks the plugin's probe).
type LinkedCheck func(ctx context.Context, configFile, instance string) bool

// QRHeader is the line above each QR code init draws; the code follows,
// each line indented by QRIndent.
const (
	QRHeader = "scan this QR code:"
	QRIndent = "  "
)

// errLinkLater is a link the user chose to leave to clawhost run.
var errLinkLater = errors.New("left to clawhost run")

// linkWhatsApp runs the WhatsApp plugin of the configuration just written
// until a phone linked it: each QR code is drawn as the plugin rotates it.
// When the plugin stops offering codes, an interactive init asks whether to
// show new ones; otherwise that is an error. It returns errLinkLater when
// the user declined.
func (s *session) linkWhatsApp(ctx context.Context, files Files) error {
	timeout := s.o.LinkTimeout
	if timeout <= 0 {
		timeout = DefaultLinkTimeout
	}
	if s.o.Linked != nil && s.o.Linked(ctx, files.Config, WhatsAppInstance) {
		s.say("\n✓ WhatsApp: already linked (its device is kept in data_dir/plugins/%s); not linking again.\n", WhatsAppInstance)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s.say("\nWhatsApp: link this bot as a device of the WhatsApp account it will answer as.\n" +
		"On that phone open WhatsApp → Settings → Linked devices → Link a device, and scan the code below.\n")
	shown, told, linking := "", "", false
	err := s.o.RunPlugin(ctx, files.Config, WhatsAppInstance, func(st pluginhost.Status, retry func(context.Context) error) (bool, error) {
		a := st.Attention
		linking = linking || st.State == pluginhost.StateNeedsAttention
		switch {
		// The instance is ready as soon as it serves, a moment before the
		// plugin reports that it links: only ready after that is linked.
		case st.State == pluginhost.StateReady && linking:
			s.say("✓ WhatsApp: linked. clawhost run connects as this device.\n")
			return true, nil
		case st.State == pluginhost.StateMisconfigured || st.State == pluginhost.StateMissing:
			return false, fmt.Errorf("the plugin does not start: %s", st.LastError)
		case st.State == pluginhost.StateNeedsAttention && a != nil && a.Kind == status.QR && a.Data != shown:
			art, err := qrcode.Terminal(a.Data, QRIndent)
			if err != nil {
				return false, err
			}
			shown = a.Data
			s.say("\n%s\n%s%s\n", QRHeader, art, qrValidity(a.ExpiresAt, s.o.Now()))
		case st.State == pluginhost.StateNeedsAttention && a != nil && a.Retry != "":
			if !s.o.Interactive {
				return false, fmt.Errorf("not linked: %s", st.Message)
			}
			s.say("\n%s\n", st.Message)
			ans, err := s.ask("Show new QR codes? (no: link at the first clawhost run) [Y/n]", "y")
			if err != nil {
				return false, err
			}
			if strings.HasPrefix(strings.ToLower(ans), "n") {
				return false, errLinkLater
			}
			return false, retry(ctx)
		case st.Message != "" && st.Message != told && st.State != pluginhost.StateNeedsAttention:
			told = st.Message
			s.say("… %s\n", st.Message)
		}
		return false, nil
	})
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no phone linked WhatsApp within %s", timeout)
	}
	return err
}

// qrValidity says how long a QR code is valid.
func qrValidity(expires, now time.Time) string {
	if expires.IsZero() {
		return "(waiting for the phone…)"
	}
	return fmt.Sprintf("(valid for %s; a new code follows; waiting for the phone…)", expires.Sub(now).Round(time.Second))
}
