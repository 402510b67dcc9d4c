package chatprompt

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var day = time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)

// TestGolden: the section per channel and kind of chat, as claude reads
// it. go test ./core/chatprompt -update rewrites testdata/*.golden.
func TestGolden(t *testing.T) {
	cases := map[string]Chat{
		"telegram_direct": {Agent: "main", Channel: "Telegram", Markdown: channel.MarkdownTelegramHTML, MaxText: 4096, Type: channel.ChatDirect,
			Files: true, SendFile: true, Reactions: true, MaxFileMB: 50, Date: day, Zone: "UTC", Memory: true, Flush: true},
		"telegram_group": {Agent: "ops", Channel: "Telegram", Markdown: channel.MarkdownTelegramHTML, MaxText: 4096, Type: channel.ChatGroup,
			Title: "Ops room", RequireMention: true, Files: true, SendFile: true, Reactions: true, Date: day, Zone: "Europe/Berlin", Memory: true},
		"discord_group_open": {Agent: "main", Channel: "Discord", Markdown: channel.MarkdownDiscord, MaxText: 2000, Type: channel.ChatGroup,
			Title: "general", Files: true, SendFile: true, MaxFileMB: 10, Date: day, Zone: "UTC", Memory: true},
		"whatsapp_direct": {Agent: "main", Channel: "WhatsApp", Markdown: channel.MarkdownWhatsApp, MaxText: 4096, Type: channel.ChatDirect,
			Files: true, Date: day, Zone: "UTC"},
		"webchat": {Channel: "Web chat", Markdown: channel.MarkdownCommonMark, Type: channel.ChatDirect, Date: day, Zone: "UTC", Memory: true},
		"plain_channel": {Agent: "main", Channel: "Loopback", Markdown: channel.MarkdownNone, Type: channel.ChatChannel, Title: "news",
			Date: day, Zone: "UTC"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Default.Render(c)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got+"\n" != string(want) {
				t.Errorf("section differs from %s (go test ./core/chatprompt -update):\n%s", path, got)
			}
			again, _ := Default.Render(c)
			if again != got {
				t.Error("two renders differ")
			}
		})
	}
}

// TestSectionIsShort: the default section stays small, since every turn
// carries it (about 4 characters a token).
func TestSectionIsShort(t *testing.T) {
	got, err := Default.Render(Chat{Agent: "main", Channel: "Telegram", Markdown: channel.MarkdownTelegramHTML, MaxText: 4096,
		Type: channel.ChatGroup, Title: "Ops", RequireMention: true, Files: true, SendFile: true, Reactions: true, MaxFileMB: 50, Date: day, Zone: "UTC", Memory: true, Flush: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got); n > 2000 {
		t.Errorf("the section is %d bytes (~%d tokens); keep it under 2000", n, n/4)
	}
}

// TestTemplateFile: an operator's template replaces the section; a field
// that does not exist is an error naming the setting.
func TestTemplateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "section.tmpl")
	if err := os.WriteFile(path, []byte("You answer on {{.Channel}} in {{.Zone}}."), 0o600); err != nil {
		t.Fatal(err)
	}
	tm, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tm.Render(Chat{Channel: "Discord", Zone: "UTC"}); err != nil || got != "You answer on Discord in UTC." {
		t.Errorf("got %q, %v", got, err)
	}
	bad, err := Parse("bad", "{{.Nope}}")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Render(Chat{}); err == nil || !strings.Contains(err.Error(), "prompt_template") {
		t.Errorf("error %v", err)
	}
}
