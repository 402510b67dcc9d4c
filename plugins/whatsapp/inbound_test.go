package whatsapp

import (
	"reflect"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"

	"github.com/clawhost/clawhost/sdk/channel"
)

var (
	botPN    = types.NewJID("15550000001", types.DefaultUserServer)
	botLID   = types.NewJID("90000000000001", types.HiddenUserServer)
	annPN    = types.NewJID("15550000002", types.DefaultUserServer)
	annLID   = types.NewJID("90000000000002", types.HiddenUserServer)
	bobLID   = types.NewJID("90000000000003", types.HiddenUserServer)
	groupJID = types.NewJID("120363000000000001", types.GroupServer)
	t0       = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

func device(j types.JID, d uint16) types.JID { j.Device = d; return j }

func txt(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }

func ext(s string, ci *waE2E.ContextInfo) *waE2E.Message {
	return &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String(s), ContextInfo: ci}}
}

func msgEvt(chat, sender, alt types.JID, fromMe bool, m *waE2E.Message) *events.Message {
	return &events.Message{Info: types.MessageInfo{
		MessageSource: types.MessageSource{Chat: chat, Sender: sender, SenderAlt: alt, IsFromMe: fromMe, IsGroup: chat.Server == types.GroupServer},
		ID:            "3EB0AAAA", PushName: "Ann", Timestamp: t0,
	}, Message: m}
}

// TestConvert checks filtering, LID normalisation, mentions, self chat and
// the backlog cutoff with synthesised whatsmeow events.
func TestConvert(t *testing.T) {
	t.Parallel()
	base := inbound{
		me:   identity{PN: botPN, LID: botLID},
		sent: func(id string) bool { return id == "SENTBYBOT" },
		alt: func(j types.JID) types.JID {
			switch j {
			case annLID:
				return annPN
			case annPN:
				return annLID
			}
			return types.EmptyJID
		},
	}
	selfChat := base
	selfChat.selfChat = true
	onlySelf := selfChat
	onlySelf.onlySelfChat = true
	withCutoff := base
	withCutoff.cutoff = t0.Add(time.Second)

	senderKeyOnly := &waE2E.Message{SenderKeyDistributionMessage: &waE2E.SenderKeyDistributionMessage{GroupID: proto.String(groupJID.String())}}
	edit := msgEvt(annPN, annPN, annLID, false, txt("changed"))
	edit.IsEdit = true

	type want struct {
		skip               string
		chatType           channel.ChatType
		chatID, senderID   string
		alts               []string
		mentioned          bool
		commandText        string
		replyTo            *channel.ReplyTo
		forwarded          bool
		mediaKind          channel.MediaKind
		text, name, reason string
	}
	cases := []struct {
		name string
		in   inbound
		evt  *events.Message
		want want
	}{
		{"DM by phone number", base, msgEvt(annPN, device(annPN, 3), types.EmptyJID, false, txt("hi")),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, text: "hi", name: "Ann"}},
		{"DM by LID with SenderAlt", inbound{me: base.me}, msgEvt(annLID, annLID, annPN, false, txt("hi")),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, text: "hi", name: "Ann"}},
		{"DM by LID from the LID map", base, msgEvt(annLID, device(annLID, 2), types.EmptyJID, false, txt("hi")),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, text: "hi", name: "Ann"}},
		{"DM by LID, number unknown", base, msgEvt(bobLID, bobLID, types.EmptyJID, false, txt("hi")),
			want{chatType: channel.ChatDirect, chatID: bobLID.String(), senderID: bobLID.String(), text: "hi", name: "Ann"}},
		{"group, not mentioned", base, msgEvt(groupJID, annLID, annPN, false, txt("hello all")),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, text: "hello all", name: "Ann"}},
		{"group mention by phone number", base, msgEvt(groupJID, annLID, annPN, false, ext("@15550000001 /new", &waE2E.ContextInfo{MentionedJID: []string{botPN.String()}})),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, mentioned: true, commandText: "/new", text: "@15550000001 /new", name: "Ann"}},
		{"group mention by LID", base, msgEvt(groupJID, annLID, annPN, false, ext("hey @90000000000001 what's up", &waE2E.ContextInfo{MentionedJID: []string{botLID.String()}})),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, mentioned: true, commandText: "hey what's up", text: "hey @90000000000001 what's up", name: "Ann"}},
		{"group mention of someone else", base, msgEvt(groupJID, annLID, annPN, false, ext("@bob", &waE2E.ContextInfo{MentionedJID: []string{bobLID.String()}})),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, text: "@bob", name: "Ann"}},
		{"group reply quoting the bot", base, msgEvt(groupJID, annLID, annPN, false, ext("and?", &waE2E.ContextInfo{StanzaID: proto.String("X1"), Participant: proto.String(botLID.String()), QuotedMessage: txt("the answer")})),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, mentioned: true, text: "and?", name: "Ann",
				replyTo: &channel.ReplyTo{MessageID: "X1", Text: "the answer", SenderID: "+15550000001", ToBot: true}}},
		{"reply quoting a sent id", base, msgEvt(groupJID, annLID, annPN, false, ext("and?", &waE2E.ContextInfo{StanzaID: proto.String("SENTBYBOT")})),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, mentioned: true, text: "and?", name: "Ann",
				replyTo: &channel.ReplyTo{MessageID: "SENTBYBOT", ToBot: true}}},
		{"reply quoting someone else", base, msgEvt(groupJID, annLID, annPN, false, ext("yes", &waE2E.ContextInfo{StanzaID: proto.String("X2"), Participant: proto.String(bobLID.String())})),
			want{chatType: channel.ChatGroup, chatID: groupJID.String(), senderID: "+15550000002", alts: []string{annLID.String()}, text: "yes", name: "Ann",
				replyTo: &channel.ReplyTo{MessageID: "X2", SenderID: bobLID.String()}}},
		{"forwarded", base, msgEvt(annPN, annPN, types.EmptyJID, false, ext("/new obey", &waE2E.ContextInfo{IsForwarded: proto.Bool(true), ForwardingScore: proto.Uint32(1)})),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, text: "/new obey", name: "Ann", forwarded: true}},
		{"voice note", base, msgEvt(annPN, annPN, types.EmptyJID, false, &waE2E.Message{AudioMessage: &waE2E.AudioMessage{PTT: proto.Bool(true), Mimetype: proto.String("audio/ogg; codecs=opus"), DirectPath: proto.String("/v/x"), MediaKey: []byte{1}, FileLength: proto.Uint64(10)}}),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, mediaKind: channel.MediaVoice, name: "Ann"}},
		{"image with caption", base, msgEvt(annPN, annPN, types.EmptyJID, false, &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("look"), Mimetype: proto.String("image/jpeg"), DirectPath: proto.String("/v/i"), MediaKey: []byte{1}}}),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, mediaKind: channel.MediaImage, text: "look", name: "Ann"}},
		{"document", base, msgEvt(annPN, annPN, types.EmptyJID, false, &waE2E.Message{DocumentMessage: &waE2E.DocumentMessage{FileName: proto.String("a.pdf"), DirectPath: proto.String("/v/d"), MediaKey: []byte{1}}}),
			want{chatType: channel.ChatDirect, chatID: "+15550000002", senderID: "+15550000002", alts: []string{annLID.String()}, mediaKind: channel.MediaDocument, name: "Ann"}},

		{"sender key distribution only", base, msgEvt(groupJID, annLID, annPN, false, senderKeyOnly), want{skip: skipNoContent}},
		{"reaction", base, msgEvt(annPN, annPN, types.EmptyJID, false, &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{Text: proto.String("👍")}}), want{skip: skipNoContent}},
		{"status broadcast", base, msgEvt(types.StatusBroadcastJID, annPN, types.EmptyJID, false, txt("story")), want{skip: skipBroadcast}},
		{"newsletter", base, msgEvt(types.NewJID("1", types.NewsletterServer), annPN, types.EmptyJID, false, txt("news")), want{skip: skipBroadcast}},
		{"protocol message", base, msgEvt(annPN, annPN, types.EmptyJID, false, &waE2E.Message{ProtocolMessage: &waE2E.ProtocolMessage{Type: waE2E.ProtocolMessage_HISTORY_SYNC_NOTIFICATION.Enum()}}), want{skip: skipProtocol}},
		{"edit", base, edit, want{skip: skipEdit}},
		{"nil message", base, msgEvt(annPN, annPN, types.EmptyJID, false, nil), want{skip: skipEmpty}},
		{"own sent id (echo)", selfChat, func() *events.Message {
			e := msgEvt(botPN, device(botPN, 7), types.EmptyJID, true, txt("the bot's reply"))
			e.Info.ID = "SENTBYBOT"
			return e
		}(), want{skip: skipSent}},
		{"own message to someone else", selfChat, msgEvt(annPN, device(botPN, 0), types.EmptyJID, true, txt("hi Ann")), want{skip: skipOwn}},
		{"self chat without self_chat", base, msgEvt(botPN, device(botPN, 0), types.EmptyJID, true, txt("note to self")), want{skip: skipOwn}},
		{"self chat", selfChat, msgEvt(botPN, device(botPN, 0), types.EmptyJID, true, txt("note to self")),
			want{chatType: channel.ChatDirect, chatID: "+15550000001", senderID: "+15550000001", alts: []string{botLID.String()}, text: "note to self", name: "Ann"}},
		{"self chat by LID", selfChat, msgEvt(botLID, device(botLID, 0), botPN, true, txt("note to self")),
			want{chatType: channel.ChatDirect, chatID: "+15550000001", senderID: "+15550000001", alts: []string{botLID.String()}, text: "note to self", name: "Ann"}},
		{"only self chat: others ignored", onlySelf, msgEvt(annPN, annPN, types.EmptyJID, false, txt("hi")), want{skip: skipNotSelf}},
		{"only self chat: self chat delivered", onlySelf, msgEvt(botPN, botPN, types.EmptyJID, true, txt("todo")),
			want{chatType: channel.ChatDirect, chatID: "+15550000001", senderID: "+15550000001", alts: []string{botLID.String()}, text: "todo", name: "Ann"}},
		{"backlog", withCutoff, msgEvt(annPN, annPN, types.EmptyJID, false, txt("old")), want{skip: skipBacklog}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, skip := c.in.convert(c.evt)
			if skip != c.want.skip {
				t.Fatalf("skip %q, want %q", skip, c.want.skip)
			}
			if skip != "" {
				return
			}
			w := c.want
			if got.ChatType != w.chatType || got.ChatID != w.chatID || got.Sender.ID != w.senderID || !reflect.DeepEqual(got.Sender.AltIDs, w.alts) {
				t.Errorf("chat %s %q sender %q %q, want %s %q %q %q", got.ChatType, got.ChatID, got.Sender.ID, got.Sender.AltIDs, w.chatType, w.chatID, w.senderID, w.alts)
			}
			if got.Text != w.text || got.Sender.Name != w.name || got.MessageID != c.evt.Info.ID || !got.Timestamp.Equal(t0) {
				t.Errorf("text %q name %q id %q ts %v", got.Text, got.Sender.Name, got.MessageID, got.Timestamp)
			}
			if got.WasMentioned != w.mentioned || got.CommandText != w.commandText {
				t.Errorf("mentioned %v command %q, want %v %q", got.WasMentioned, got.CommandText, w.mentioned, w.commandText)
			}
			if !reflect.DeepEqual(got.ReplyTo, w.replyTo) {
				t.Errorf("reply to %+v, want %+v", got.ReplyTo, w.replyTo)
			}
			if (got.Forward != nil) != w.forwarded {
				t.Errorf("forward %+v, want forwarded=%v", got.Forward, w.forwarded)
			}
			switch {
			case w.mediaKind == "" && len(got.Media) != 0:
				t.Errorf("media %+v, want none", got.Media)
			case w.mediaKind != "" && (len(got.Media) != 1 || got.Media[0].Kind != w.mediaKind):
				t.Errorf("media %+v, want one %s", got.Media, w.mediaKind)
			case w.mediaKind != "":
				if _, err := parseRef(got.Media[0].Ref); err != nil {
					t.Errorf("media ref: %v", err)
				}
			}
		})
	}
}

func TestMediaRefRoundTrip(t *testing.T) {
	t.Parallel()
	m := mediaOf(channel.MediaDocument, &waE2E.DocumentMessage{DirectPath: proto.String("/v/t62/x"), MediaKey: []byte("k"), FileEncSHA256: []byte("e"),
		FileSHA256: []byte("s"), FileLength: proto.Uint64(42)}, "application/pdf", "a.pdf", "")
	r, err := parseRef(m.Ref)
	if err != nil || r.DirectPath != "/v/t62/x" || string(r.MediaKey) != "k" || r.Length != 42 || r.Type != "WhatsApp Document Keys" || r.MIME != "application/pdf" {
		t.Fatalf("%+v, %v", r, err)
	}
	for _, bad := range []string{"", "wa1:!!", "tg:123", "wa1:e30"} {
		if _, err := parseRef(bad); err == nil {
			t.Errorf("parseRef(%q) accepted", bad)
		}
	}
}

func TestParseChat(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"+15550000002":               "15550000002@s.whatsapp.net",
		"15550000002@s.whatsapp.net": "15550000002@s.whatsapp.net",
		"90000000000002@lid":         "90000000000002@lid",
		"120363000000000001@g.us":    "120363000000000001@g.us",
		"+0123":                      "",
		"missing-conformance-chat":   "",
		"status@broadcast":           "",
		"1@newsletter":               "",
		"":                           "",
	} {
		j, err := parseChat(id)
		switch {
		case want == "" && (err == nil || channelCode(err) != channel.CodeChatNotFound):
			t.Errorf("parseChat(%q) = %v, %v; want chat_not_found", id, j, err)
		case want != "" && (err != nil || j.String() != want):
			t.Errorf("parseChat(%q) = %v, %v; want %s", id, j, err, want)
		}
	}
}

func channelCode(err error) channel.Code { return channel.CodeOf(err) }
