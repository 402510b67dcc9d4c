package discord

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestInbound pushes one message per case into a running plugin and checks
// what the host receives (or that it receives nothing: the next case's
// message arrives first).
func TestInbound(t *testing.T) {
	srv := newServer(t)
	dm := srv.AddDM(alice)
	general := guildChannel(srv, "general")
	thread := srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelPublicThread, GuildID: guildID, Name: "ideas", ParentID: general.ID, OwnerID: alice.ID})
	a := newAdapter(t, srv, "", nil)
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	botMsg := srv.Push(discordtest.Message{ChannelID: general.ID, Author: srv.Bot(), Content: "I am the bot"})

	cases := []struct {
		name string
		push discordtest.Message
		// want is nil when nothing is delivered.
		want *channel.InboundMessage
	}{
		{"dm", discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "hello"},
			&channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: dm.ID, Sender: channel.Sender{ID: alice.ID, Name: "Alice", Username: "alice"}, Text: "hello"}},
		{"guild unaddressed", discordtest.Message{ChannelID: general.ID, Author: bob, Content: "just chatting"},
			&channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ChatTitle: "general", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"}, Text: "just chatting"}},
		{"mention", discordtest.Message{ChannelID: general.ID, Author: bob, Content: mention(discordtest.BotID) + " what's up <@" + alice.ID + ">", Mentions: []discordtest.User{srv.Bot(), alice}},
			&channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ChatTitle: "general", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"},
				Text: "@clawbot what's up @alice", CommandText: "what's up @alice", WasMentioned: true}},
		{"nick mention", discordtest.Message{ChannelID: general.ID, Author: bob, Content: "<@!" + discordtest.BotID + "> /status", Mentions: []discordtest.User{srv.Bot()}},
			&channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ChatTitle: "general", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"},
				Text: "@clawbot /status", CommandText: "/status", WasMentioned: true}},
		{"role mention", discordtest.Message{ChannelID: general.ID, Author: bob, Content: "<@&" + discordtest.BotRoleID + "> help", MentionRoles: []string{discordtest.BotRoleID}},
			&channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ChatTitle: "general", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"},
				Text: "@clawbot help", CommandText: "help", WasMentioned: true}},
		{"reply to bot", discordtest.Message{ChannelID: general.ID, Author: bob, Content: "and then?", MessageReference: &discordtest.MessageReference{MessageID: botMsg.ID}},
			&channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ChatTitle: "general", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"},
				Text: "and then?", WasMentioned: true, ReplyTo: &channel.ReplyTo{MessageID: botMsg.ID, Text: "I am the bot", SenderID: discordtest.BotID, SenderName: "clawbot", ToBot: true}}},
		{"thread", discordtest.Message{ChannelID: thread.ID, Author: bob, Content: "in the thread"},
			&channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: general.ID, ThreadID: thread.ID, ChatTitle: "general › ideas", Sender: channel.Sender{ID: bob.ID, Name: "bob", Username: "bob"}, Text: "in the thread"}},
		{"own message", discordtest.Message{ChannelID: general.ID, Author: srv.Bot(), Content: "mine"}, nil},
		{"other bot", discordtest.Message{ChannelID: general.ID, Author: other, Content: "beep"}, nil},
		{"empty", discordtest.Message{ChannelID: general.ID, Author: bob, Content: "  "}, nil},
	}
	got := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := srv.Push(c.push)
			if c.want == nil {
				// Nothing for this one: a marker pushed after it is the next delivery.
				srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "marker " + c.name})
				got++
				msgs := inbox.Wait(t, got)
				if last := msgs[got-1]; last.Text != "marker "+c.name {
					t.Fatalf("delivered %q, want nothing before the marker", last.Text)
				}
				return
			}
			got++
			in := inbox.Wait(t, got)[got-1]
			want := *c.want
			want.MessageID = m.ID
			want.Timestamp = in.Timestamp
			if !m.Timestamp.Equal(in.Timestamp) {
				t.Errorf("timestamp %v, want %v", in.Timestamp, m.Timestamp)
			}
			if diff := compare(in, want); diff != "" {
				t.Errorf("got %s", diff)
			}
		})
	}
	// Edits are ignored.
	first := inbox.Stored()[0]
	srv.Edit(first.MessageID, "edited hello")
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "after edit"})
	if last := inbox.Wait(t, got+1)[got]; last.Text != "after edit" {
		t.Errorf("after an edit got %q", last.Text)
	}
}

// compare describes the difference of two messages ("" when equal).
func compare(got, want channel.InboundMessage) string {
	g, w := strings.TrimSpace(dump(got)), strings.TrimSpace(dump(want))
	if g == w {
		return ""
	}
	return g + "\nwant\n" + w
}

func dump(m channel.InboundMessage) string {
	var b strings.Builder
	b.WriteString(strings.Join([]string{string(m.ChatType), m.ChatID, m.ThreadID, m.MessageID, m.ChatTitle, m.Text, m.CommandText}, "|"))
	b.WriteString("|" + m.Sender.ID + "/" + m.Sender.Name + "/" + m.Sender.Username)
	if m.WasMentioned {
		b.WriteString("|mentioned")
	}
	if r := m.ReplyTo; r != nil {
		b.WriteString("|reply:" + r.MessageID + "/" + r.Text + "/" + r.SenderID + "/" + r.SenderName)
		if r.ToBot {
			b.WriteString("/tobot")
		}
	}
	return b.String()
}

// TestMentionOnly: with message_content = false the plugin identifies
// without the privileged intent; unaddressed guild messages arrive empty
// (Discord blanks them) and are dropped, mentions and DMs arrive.
func TestMentionOnly(t *testing.T) {
	srv := newServer(t)
	srv.SetMessageContentAllowed(false)
	dm := srv.AddDM(alice)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", map[string]any{"message_content": false})
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	if srv.Intents()&discordtest.IntentMessageContent != 0 {
		t.Fatalf("intents %b include Message Content", srv.Intents())
	}
	srv.Push(discordtest.Message{ChannelID: general.ID, Author: bob, Content: "not for the bot"})
	srv.Push(discordtest.Message{ChannelID: general.ID, Author: bob, Content: mention(discordtest.BotID) + " for the bot", Mentions: []discordtest.User{srv.Bot()}})
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "a dm"})
	msgs := inbox.Wait(t, 2)
	if got := text(msgs); len(got) != 2 || got[0] != "@clawbot for the bot" || got[1] != "a dm" {
		t.Errorf("delivered %q", got)
	}
}

// TestAttachments: attachments become media (voice messages by flag) and
// download through DownloadMedia, within max bytes.
func TestAttachments(t *testing.T) {
	srv, dm, a := aliceDM(t)
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	img := srv.AddFile("cat.png", "image/png", []byte("PNGDATA"))
	voice := srv.AddFile("voice-message.ogg", "audio/ogg", []byte("OGGDATA"))
	doc := srv.AddFile("notes.txt", "text/plain", []byte(strings.Repeat("x", 100)))
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Content: "look", Attachments: []discordtest.Attachment{img, doc}})
	srv.Push(discordtest.Message{ChannelID: dm.ID, Author: alice, Attachments: []discordtest.Attachment{voice}, Flags: discordtest.MessageFlagVoice})
	msgs := inbox.Wait(t, 2)
	if len(msgs[0].Media) != 2 || msgs[0].Media[0].Kind != channel.MediaImage || msgs[0].Media[1].Kind != channel.MediaDocument {
		t.Fatalf("media %+v", msgs[0].Media)
	}
	if len(msgs[1].Media) != 1 || msgs[1].Media[0].Kind != channel.MediaVoice || msgs[1].Text != "" {
		t.Fatalf("voice message %+v", msgs[1])
	}
	ctx := context.Background()
	r, info, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: msgs[0].Media[0].Ref})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "PNGDATA" || info.MIME != "image/png" || info.Size != 7 {
		t.Errorf("downloaded %q %+v", b, info)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: msgs[0].Media[1].Ref, MaxBytes: 10}); channel.CodeOf(err) != channel.CodeMessageTooLong {
		t.Errorf("download over max bytes: %v", err)
	}
	if _, _, err := a.DownloadMedia(ctx, channel.DownloadRequest{Ref: "file:///etc/passwd"}); channel.CodeOf(err) != channel.CodeInvalidRequest {
		t.Errorf("download of a file url: %v", err)
	}
}

// TestAttachmentDownloadCapsTheStream: an attachment whose size is not
// announced (no Content-Length) stops at the cap while streaming; the
// reader never hands out more than the cap allows.
func TestAttachmentDownloadCapsTheStream(t *testing.T) {
	t.Parallel()
	body := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 4096))
		for range 256 { // 1 MB, chunked
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(body.Close)
	a := newAdapter(t, newServer(t), "", nil)
	rc, _, err := a.DownloadMedia(context.Background(), channel.DownloadRequest{Ref: body.URL + "/attachments/1/big.bin", MaxBytes: 10000})
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, rc)
	rc.Close()
	if channel.CodeOf(err) != channel.CodeMessageTooLong || n > 10001 {
		t.Errorf("read %d bytes, %v; want message_too_long by byte 10001", n, err)
	}
}
