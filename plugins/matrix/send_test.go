package matrix

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"maunium.net/go/mautrix/event"

	"github.com/clawhost/clawhost/markup"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestContentFitsOneEvent: a message is the host's rich-html rendering as
// formatted_body with its visible text as body; one at the text limit
// whose HTML, escaped for JSON, would not fit an event goes as its body
// alone, whole; an edit of a long message drops its fallback's HTML
// before the new text's.
func TestContentFitsOneEvent(t *testing.T) {
	t.Parallel()
	a := New()
	ctx := context.Background()
	for _, tc := range []struct {
		name, text string
		html       bool
	}{
		{"markdown", "**hi** and `code`\n\n- one", true},
		{"text at the limit, half of it bold", strings.Repeat("word **bold** ", MaxTextLength/10)[:MaxTextLength-100], true},
		{"code at the limit", "```go\n" + strings.Repeat("if a < b && c > d { x() }\n", MaxTextLength/26) + "```", true},
		{"all < and &", strings.Repeat("<&", MaxTextLength/2), false},
	} {
		r := markup.RenderFor(tc.text, channel.MarkupRichHTML)
		if n := len(r.Visible); n > MaxTextLength {
			t.Fatalf("%s: %d visible bytes, over the limit", tc.name, n)
		}
		c := a.content(ctx, "!r:hs", tc.text, channel.FormatMarkdown, r)
		b, _ := json.Marshal(c)
		if len(b) > maxEventBytes || c.Body != r.Visible {
			t.Errorf("%s: %d bytes of JSON, body %.40q", tc.name, len(b), c.Body)
		}
		if got := c.Format == event.FormatHTML && c.FormattedBody == r.Text; got != tc.html {
			t.Errorf("%s: sent with its HTML %v, want %v", tc.name, got, tc.html)
		}
	}
	plain := a.content(ctx, "!r:hs", "**not markdown**", channel.FormatPlain, nil)
	if plain.Body != "**not markdown**" || plain.FormattedBody != "" {
		t.Errorf("plain text: %+v", plain)
	}
}
