package chatprompt

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/internal/golden"

	"github.com/clawhost/clawhost/plugins/discord"
	"github.com/clawhost/clawhost/plugins/telegram"
	"github.com/clawhost/clawhost/plugins/webchat"
	"github.com/clawhost/clawhost/plugins/whatsapp"
	"github.com/clawhost/clawhost/sdk/channel"
)

var day = time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC)

// declared is a chat on a first-party channel as the host describes it
// from what the plugin declares (core/turn's section): its name, markdown
// flavour, text limit, files and their size limit, reactions. A plugin
// that changes what it declares changes its goldens.
func declared(ch channel.Channel, name string, typ channel.ChatType) Chat {
	caps := ch.Capabilities()
	_, react := ch.(channel.Reactor)
	return Chat{Channel: cmp.Or(caps.DisplayName, name), Markup: caps.Markup, MaxText: caps.MaxTextLength, Type: typ,
		Files: slices.Contains(caps.MediaOut, channel.MediaDocument), SendFile: true, Schedule: true, MaxFileMB: int(caps.MaxFileBytes >> 20),
		Reactions: react, Date: day, Zone: "UTC"}
}

// goldenCases are the section's cases: per channel and kind of chat, the
// first-party channels as their plugins declare themselves.
func goldenCases() map[string]Chat {
	with := func(c Chat, f func(*Chat)) Chat { f(&c); return c }
	tg, dc, wa, web := telegram.New(), discord.New(), whatsapp.New(), &webchat.Adapter{}
	return map[string]Chat{
		"telegram_direct": with(declared(tg, "Telegram", channel.ChatDirect), func(c *Chat) { c.Agent, c.Memory, c.Flush = "main", true, true }),
		"telegram_group": with(declared(tg, "Telegram", channel.ChatGroup), func(c *Chat) {
			c.Agent, c.Title, c.RequireMention, c.Zone, c.Memory = "ops", "Ops room", true, "Europe/Berlin", true
		}),
		"discord_direct":     with(declared(dc, "Discord", channel.ChatDirect), func(c *Chat) { c.Agent, c.Memory, c.Flush = "main", true, true }),
		"discord_group_open": with(declared(dc, "Discord", channel.ChatGroup), func(c *Chat) { c.Agent, c.Title, c.Memory = "main", "general", true }),
		"whatsapp_direct":    with(declared(wa, "WhatsApp", channel.ChatDirect), func(c *Chat) { c.Agent, c.SendFile = "main", false }),
		"whatsapp_group": with(declared(wa, "WhatsApp", channel.ChatGroup), func(c *Chat) {
			c.Agent, c.Title, c.RequireMention, c.Memory, c.Flush = "main", "Family", true, true, true
		}),
		"webchat": with(declared(web, "Web chat", channel.ChatDirect), func(c *Chat) { c.Memory = true }),
		"plain_channel": {Agent: "main", Channel: "Loopback", Markup: channel.MarkupNone, Type: channel.ChatChannel, Title: "news",
			Date: day, Zone: "UTC"},
	}
}

// TestGolden: the section of each case, as claude reads it. go test
// ./core/chatprompt -update rewrites testdata/*.golden.
func TestGolden(t *testing.T) {
	for name, c := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			got, err := Default.Render(c)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", name+".golden"), []byte(got+"\n"))
			again, _ := Default.Render(c)
			if again != got {
				t.Error("two renders differ")
			}
		})
	}
}

// TestSectionIsShort: the default section stays small, since every turn
// carries it. It logs each case's size in characters and tokens (about 4
// characters a token; go test -v ./core/chatprompt -run TestSectionIsShort)
// and holds the worst case — a group with everything on — under 2000
// characters (~500 tokens).
func TestSectionIsShort(t *testing.T) {
	cases := goldenCases()
	worst := cases["telegram_group"]
	worst.SendFile, worst.MaxFileMB, worst.Flush = true, 50, true
	cases["worst: telegram group, everything on"] = worst
	names := slices.Sorted(maps.Keys(cases))
	for _, name := range names {
		got, err := Default.Render(cases[name])
		if err != nil {
			t.Fatal(err)
		}
		n := utf8.RuneCountInString(got)
		t.Logf("%-40s %5d chars  ~%3d tokens", name, n, n/4)
		if n > 2000 {
			t.Errorf("%s: the section is %d characters (~%d tokens); keep it under 2000", name, n, n/4)
		}
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

// TestDefaultKeptForTheDay: the built-in section is rendered once a day
// per chat: another time of the same day gives the same text as a
// rendering of its own, the next day or any other field a new one; a
// template of the operator's that reads the clock is rendered every time.
func TestDefaultKeptForTheDay(t *testing.T) {
	for name, c := range goldenCases() {
		fresh := func(c Chat) string {
			t.Helper()
			s, err := Default.render(c)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		for _, at := range []time.Time{day, day.Add(14 * time.Hour), day.Add(-9*time.Hour - 30*time.Minute), day.Add(24 * time.Hour), day.Add(14*time.Hour + 31*time.Minute)} {
			c.Date = at
			for _, title := range []string{c.Title, c.Title + " (renamed)"} {
				c.Title = title
				got, err := Default.Render(c)
				if err != nil {
					t.Fatal(err)
				}
				if want := fresh(c); got != want {
					t.Errorf("%s at %v: kept\n%s\nwant\n%s", name, at, got, want)
				}
			}
		}
	}
	clock, err := Parse("clock", `at {{.Date.Format "15:04"}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{day, day.Add(time.Minute)} {
		got, _ := clock.Render(Chat{Date: at})
		if want := "at " + at.Format("15:04"); got != want {
			t.Errorf("an operator's template at %v: %q, want %q", at, got, want)
		}
	}
}

// BenchmarkRender: the built-in section of a Telegram group, as a warm
// turn asks for it, kept for the day and rendered anew.
//
//	go test ./core/chatprompt -run '^$' -bench Render
func BenchmarkRender(b *testing.B) {
	c := goldenCases()["telegram_group"]
	b.Run("kept", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Date = c.Date.Add(time.Millisecond)
			if _, err := Default.Render(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rendered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Default.render(c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
