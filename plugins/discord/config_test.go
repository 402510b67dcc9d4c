package discord

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/sdk/schema"
)

// TestValidate: every problem of a block is reported at once, each at its
// attribute path, and nothing secret is repeated.
func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  map[string]any
		// want are "attribute: summary fragment"; empty means valid.
		want []string
	}{
		{"minimal", map[string]any{"token": "abc.def.ghi"}, nil},
		{"bot prefix", map[string]any{"token": "Bot abc.def.ghi"}, nil},
		{"everything", map[string]any{"token": "abc.def.ghi", "api_endpoint": "http://127.0.0.1:1", "message_content": false,
			"guilds": []string{"123456789012345678"}, "thread_per_conversation": true, "thread_auto_archive": 60, "max_download_bytes": 1}, nil},
		{"empty token", map[string]any{"token": " "}, []string{"token: must not be empty"}},
		{"bad values", map[string]any{"token": "has space/slash", "api_endpoint": "discord.com", "guilds": []string{"123456789012345678", "general"},
			"thread_auto_archive": 5, "max_download_bytes": 0.5},
			[]string{"token: is not a bot token", "api_endpoint: must be an http", "guilds[1]: is not a server id",
				"thread_auto_archive: must be 60", "max_download_bytes: must be a positive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, _ := json.Marshal(c.cfg)
			err := Validate(context.Background(), schema.Config{Instance: "dc", JSON: b})
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("valid block refused: %v", err)
				}
				return
			}
			var d schema.Diagnostics
			if !errors.As(err, &d) {
				t.Fatalf("got %v, want diagnostics", err)
			}
			if len(d) != len(c.want) {
				t.Errorf("%d diagnostics, want %d: %v", len(d), len(c.want), d)
			}
			for i, w := range c.want {
				if i >= len(d) {
					break
				}
				got := d[i].Attribute + ": " + d[i].Summary
				if !strings.HasPrefix(got, w) {
					t.Errorf("diagnostic %d is %q, want %q", i, got, w)
				}
				if strings.Contains(d[i].Summary+d[i].Detail, "has space") {
					t.Errorf("the token's value is in a diagnostic")
				}
			}
		})
	}
}
