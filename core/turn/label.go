package turn

import (
	"unicode"

	"github.com/clawhost/clawhost/sdk/channel"
)

// Labels names channel instances for people.
type Labels interface {
	// DisplayName is the platform name the instance's plugin declares
	// (channel.Capabilities.DisplayName, e.g. "Discord"); empty when it
	// declares none or is unknown. Never blocks.
	DisplayName(instance string) string
	// Capabilities are what the instance's plugin declared at its last
	// start (what it renders, its length limit, the media it sends); ok
	// is false when it never started. Never blocks.
	Capabilities(instance string) (caps channel.Capabilities, ok bool)
}

// channelLabel is the envelope's channel part: the display name the
// instance's plugin declares, else its source title-cased ("telegram" →
// "Telegram").
func (t *Turns) channelLabel(instance, source string) string {
	if t.opts.Labels != nil {
		if name := t.opts.Labels.DisplayName(instance); name != "" {
			return name
		}
	}
	if source == "" {
		return ""
	}
	r := []rune(source)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
