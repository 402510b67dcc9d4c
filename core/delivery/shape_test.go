package delivery

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/golden"

	"github.com/clawhost/clawhost/sdk/channel"
)

// fencesBalanced reports whether every ``` fence line of s has its pair
// (the replies below use only ``` fences).
func fencesBalanced(s string) bool {
	n := 0
	for l := range strings.SplitSeq(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			n++
		}
	}
	return n%2 == 0
}

// discordReply is a reply longer than Discord's 17-line soft limit: prose,
// then a 30-line code block.
func discordReply() string {
	var b strings.Builder
	b.WriteString("Here is the fix:\n\n```go\n")
	for i := range 30 {
		fmt.Fprintf(&b, "\tstep%d()\n", i)
	}
	b.WriteString("```\n\nRun `make check` after it.")
	return b.String()
}

func TestLineLimitSplitsRepliesWithFencesReopened(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2000)
	f.ch.desc.Capabilities.MaxLines = 17
	id := f.entry()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: discordReply(), Format: channel.FormatMarkdown})
	calls := f.ch.log()
	if len(calls) < 2 {
		t.Fatalf("a 35-line reply fits 17 lines per message in one call: %+v", calls)
	}
	var golden strings.Builder
	for i, c := range calls {
		lines := strings.Count(c.text, "\n") + 1
		if c.op != "send" || lines > 17 || !fencesBalanced(c.text) || c.format != channel.FormatMarkdown {
			t.Errorf("message %d (%d lines, %s): %q", i, lines, c.format, c.text)
		}
		if i > 0 && strings.HasPrefix(c.text, "\tstep") {
			t.Errorf("message %d continues the code without reopening the fence: %q", i, c.text)
		}
		fmt.Fprintf(&golden, "--- message %d (%d lines)\n%s\n", i, lines, c.text)
	}
	checkGolden(t, "lines-17.txt", golden.String())
	if st := f.state(id); st != "done" {
		t.Errorf("entry %s", st)
	}
}

func TestLineLimitAppliesToStreamedSends(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2000)
	f.ch.desc.Capabilities.MaxLines = 3
	ids := f.d.Send(sk("k"), tgt, "a\nb\nc\nd\ne", channel.FormatMarkdown)
	calls := f.ch.log()
	if len(ids) != 2 || len(calls) != 2 || calls[0].text != "a\nb\nc" || calls[1].text != "d\ne" {
		t.Fatalf("ids %v calls %+v", ids, calls)
	}
}

func TestPlainTextForChannelsWithoutMarkdown(t *testing.T) {
	t.Parallel()
	const md = "**Done.** See [the log](https://x.io/l) and run `make check`."
	for _, tc := range []struct {
		name    string
		flavour channel.Markup
		text    string
		format  channel.Format
		want    string

		wantFormat channel.Format
	}{
		{"none renders plain", channel.MarkupNone, md, channel.FormatMarkdown, "Done. See the log (https://x.io/l) and run make check.", channel.FormatPlain},
		{"undeclared is none", "", md, channel.FormatMarkdown, "Done. See the log (https://x.io/l) and run make check.", channel.FormatPlain},
		{"markdown unchanged", channel.MarkupMarkdown, md, channel.FormatMarkdown, md, channel.FormatMarkdown},
		{"html-subset unchanged", channel.MarkupHTMLSubset, md, channel.FormatMarkdown, md, channel.FormatMarkdown},
		{"plain notice not rendered again", channel.MarkupNone, "*stars* stay", channel.FormatPlain, "*stars* stay", channel.FormatPlain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 2000)
			f.ch.desc.Capabilities.Markup = tc.flavour
			f.d.Deliver(Reply{Key: sk("k"), ID: f.entry(), Target: tgt, Text: tc.text, Format: tc.format})
			calls := f.ch.log()
			if len(calls) != 1 || calls[0].text != tc.want || calls[0].format != tc.wantFormat {
				t.Fatalf("calls %+v, want %q as %s", calls, tc.want, tc.wantFormat)
			}
		})
	}
}

func TestPlainDraftIsRenderedOnceAndEditedPlain(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2000)
	f.ch.desc.Capabilities.Markup = channel.MarkupNone
	id := f.entry()
	dr := f.draft(id)
	dr.Update("**Hel**")
	dr.Stop()
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "**Hello** `x*y*`", Format: channel.FormatMarkdown, Draft: dr})
	calls := f.ch.log()
	if len(calls) != 2 || calls[0].text != "Hel" || calls[0].format != channel.FormatPlain ||
		calls[1].op != "edit" || calls[1].text != "Hello x*y*" || calls[1].format != channel.FormatPlain {
		t.Fatalf("calls %+v", calls)
	}
}

func TestDraftStopsAtTheLineLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 2000)
	f.ch.desc.Capabilities.MaxLines = 3
	id := f.entry()
	dr := f.draft(id)
	dr.Update("1\n2\n3\n4")
	dr.Stop()
	if calls := f.ch.log(); len(calls) != 0 {
		t.Fatalf("a draft over the line limit is not shown: %+v", calls)
	}
	f.d.Deliver(Reply{Key: sk("k"), ID: id, Target: tgt, Text: "1\n2\n3\n4", Format: channel.FormatMarkdown, Draft: dr})
	if calls := f.ch.log(); len(calls) != 2 || calls[0].text != "1\n2\n3" || calls[1].text != "4" {
		t.Fatalf("calls %+v", calls)
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), []byte(got))
}

// TestSplitByRenderedLength: the host measures a reply rendered in the
// channel's markup. A reply whose Markdown is longer than the limit but
// whose visible text fits goes as one message; one whose rendering is
// longer than its Markdown (a link's url shown in plain text) is split so
// that every rendered message fits.
func TestSplitByRenderedLength(t *testing.T) {
	t.Parallel()
	bold := "**" + strings.Repeat("a", 40) + "** [docs](https://example.com/docs)" // 77 units, 45 visible
	for _, tc := range []struct {
		name   string
		markup channel.Markup
		text   string
		want   []string
		format channel.Format
	}{
		{"html-subset counts what shows", channel.MarkupHTMLSubset, bold, []string{bold}, channel.FormatMarkdown},
		{"plain counts the url", channel.MarkupNone, strings.Repeat("word ", 8) + "[x](https://example.com/a/long/path)",
			[]string{"word word word word word word word word", "x (https://example.com/a/long/path)"}, channel.FormatPlain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 50)
			f.ch.desc.Capabilities.Markup = tc.markup
			f.d.Deliver(Reply{Key: sk("k"), ID: f.entry(), Target: tgt, Text: tc.text, Format: channel.FormatMarkdown})
			calls := f.ch.log()
			var got []string
			for _, c := range calls {
				got = append(got, c.text)
				if c.format != tc.format {
					t.Errorf("sent as %s, want %s", c.format, tc.format)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("sent %q, want %q", got, tc.want)
			}
		})
	}
}
