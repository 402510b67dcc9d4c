package telegram

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

var testSelf = self{ID: 999, Username: "clawbot"}

func TestToInbound(t *testing.T) {
	t.Parallel()
	ts := time.Unix(1700000000, 0).UTC()
	alice := channel.Sender{ID: "1001", Name: "Alice Smith", Username: "alice"}
	tests := []struct {
		name   string
		update string
		want   *channel.InboundMessage // nil: skipped
	}{
		{
			name:   "private",
			update: `{"update_id":1,"message":{"message_id":5,"date":1700000000,"chat":{"id":1001,"type":"private","first_name":"Alice"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"hello"}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "5", Sender: alice, Text: "hello", Timestamp: ts},
		},
		{
			name:   "group without mention",
			update: `{"update_id":2,"message":{"message_id":6,"date":1700000000,"chat":{"id":-100123,"type":"supergroup","title":"Devs"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"talking among ourselves @alice","entities":[{"type":"mention","offset":24,"length":6}]}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-100123", MessageID: "6", Sender: alice, Text: "talking among ourselves @alice", Timestamp: ts, ChatTitle: "Devs"},
		},
		{
			name: "group with mention after emoji (UTF-16 offsets)",
			// "😀 @ClawBot hi": the emoji is 2 UTF-16 units.
			update: `{"update_id":3,"message":{"message_id":7,"date":1700000000,"chat":{"id":-5,"type":"group","title":"Old group"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"😀 @ClawBot hi","entities":[{"type":"mention","offset":3,"length":8}]}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-5", MessageID: "7", Sender: alice, Text: "😀 @ClawBot hi", WasMentioned: true, Timestamp: ts, ChatTitle: "Old group"},
		},
		{
			name:   "text_mention of the bot",
			update: `{"update_id":4,"message":{"message_id":8,"date":1700000000,"chat":{"id":-5,"type":"group","title":"G"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"Claw, help","entities":[{"type":"text_mention","offset":0,"length":4,"user":{"id":999,"is_bot":true,"first_name":"Claw"}}]}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-5", MessageID: "8", Sender: alice, Text: "Claw, help", WasMentioned: true, Timestamp: ts, ChatTitle: "G"},
		},
		{
			name:   "forum topic",
			update: `{"update_id":5,"message":{"message_id":50,"message_thread_id":42,"is_topic_message":true,"date":1700000000,"chat":{"id":-100777,"type":"supergroup","title":"Forum","is_forum":true},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"reply_to_message":{"message_id":42,"date":1699999999,"chat":{"id":-100777,"type":"supergroup"},"from":{"id":1001,"first_name":"Alice"},"forum_topic_created":{"name":"Ideas","icon_color":1}},"text":"in the topic"}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-100777", ThreadID: "42", MessageID: "50", Sender: alice, Text: "in the topic", Timestamp: ts, ChatTitle: "Forum"},
		},
		{
			name:   "reply to the bot inside a topic",
			update: `{"update_id":6,"message":{"message_id":51,"message_thread_id":42,"is_topic_message":true,"date":1700000000,"chat":{"id":-100777,"type":"supergroup","title":"Forum"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"reply_to_message":{"message_id":49,"date":1699999999,"chat":{"id":-100777,"type":"supergroup"},"from":{"id":999,"is_bot":true,"first_name":"Claw","username":"clawbot"},"text":"earlier answer"},"text":"why?"}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-100777", ThreadID: "42", MessageID: "51", Sender: alice, Text: "why?", WasMentioned: true, Timestamp: ts, ChatTitle: "Forum",
				ReplyTo: &channel.ReplyTo{MessageID: "49", Text: "earlier answer", SenderID: "999", SenderName: "Claw", ToBot: true}},
		},
		{
			name:   "reply to someone else",
			update: `{"update_id":7,"message":{"message_id":9,"date":1700000000,"chat":{"id":-5,"type":"group","title":"G"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"reply_to_message":{"message_id":3,"date":1,"chat":{"id":-5,"type":"group"},"from":{"id":7,"first_name":"Bob"},"caption":"a photo"},"text":"nice"}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-5", MessageID: "9", Sender: alice, Text: "nice", Timestamp: ts, ChatTitle: "G",
				ReplyTo: &channel.ReplyTo{MessageID: "3", Text: "a photo", SenderID: "7", SenderName: "Bob"}},
		},
		{
			name:   "command addressed to us",
			update: `{"update_id":8,"message":{"message_id":10,"date":1700000000,"chat":{"id":-5,"type":"group","title":"G"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"/new@ClawBot fresh start","entities":[{"type":"bot_command","offset":0,"length":12}]}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatGroup, ChatID: "-5", MessageID: "10", Sender: alice, Text: "/new@ClawBot fresh start", CommandText: "/new fresh start", WasMentioned: true, Timestamp: ts, ChatTitle: "G"},
		},
		{
			name:   "plain command",
			update: `{"update_id":9,"message":{"message_id":11,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"/status","entities":[{"type":"bot_command","offset":0,"length":7}]}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "11", Sender: alice, Text: "/status", Timestamp: ts},
		},
		{
			name:   "command for another bot",
			update: `{"update_id":10,"message":{"message_id":12,"date":1700000000,"chat":{"id":-5,"type":"group","title":"G"},"from":{"id":1001,"first_name":"Alice"},"text":"/start@otherbot","entities":[{"type":"bot_command","offset":0,"length":15}]}}`,
		},
		{
			name:   "channel post",
			update: `{"update_id":11,"channel_post":{"message_id":13,"date":1700000000,"chat":{"id":-100999,"type":"channel","title":"News","username":"news"},"sender_chat":{"id":-100999,"type":"channel","title":"News","username":"news"},"text":"breaking"}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatChannel, ChatID: "-100999", MessageID: "13", Sender: channel.Sender{ID: "-100999", Name: "News", Username: "news"}, Text: "breaking", Timestamp: ts, ChatTitle: "News"},
		},
		{
			name:   "photo with caption: largest size",
			update: `{"update_id":12,"message":{"message_id":14,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"photo":[{"file_id":"small","file_unique_id":"s","width":90,"height":90,"file_size":1000},{"file_id":"big","file_unique_id":"b","width":1280,"height":1280,"file_size":90000},{"file_id":"mid","file_unique_id":"m","width":320,"height":320,"file_size":9000}],"caption":"look"}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "14", Sender: alice, Text: "look", Timestamp: ts,
				Media: []channel.Media{{Kind: channel.MediaImage, Ref: "big", MIME: "image/jpeg", Size: 90000, Caption: "look"}}},
		},
		{
			name:   "voice without caption",
			update: `{"update_id":13,"message":{"message_id":15,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"voice":{"file_id":"v1","file_unique_id":"u","duration":3,"mime_type":"audio/ogg","file_size":5000}}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "15", Sender: alice, Timestamp: ts,
				Media: []channel.Media{{Kind: channel.MediaVoice, Ref: "v1", MIME: "audio/ogg", Size: 5000}}},
		},
		{
			name:   "document and sticker kinds",
			update: `{"update_id":14,"message":{"message_id":16,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"document":{"file_id":"d1","file_unique_id":"u","file_name":"report.pdf","mime_type":"application/pdf","file_size":123},"caption":"the report @clawbot","caption_entities":[{"type":"mention","offset":11,"length":8}]}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "16", Sender: alice, Text: "the report @clawbot", WasMentioned: true, Timestamp: ts,
				Media: []channel.Media{{Kind: channel.MediaDocument, Ref: "d1", MIME: "application/pdf", Size: 123, Filename: "report.pdf", Caption: "the report @clawbot"}}},
		},
		{
			name:   "sticker",
			update: `{"update_id":15,"message":{"message_id":17,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"sticker":{"file_id":"st","file_unique_id":"u","type":"regular","width":512,"height":512,"is_animated":false,"is_video":false,"file_size":7}}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "17", Sender: alice, Timestamp: ts,
				Media: []channel.Media{{Kind: channel.MediaSticker, Ref: "st", MIME: "image/webp", Size: 7}}},
		},
		{
			name:   "edited message",
			update: `{"update_id":16,"edited_message":{"message_id":5,"date":1700000000,"edit_date":1700000060,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"hello (fixed)"}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "5", Sender: alice, Text: "hello (fixed)", Timestamp: ts.Add(time.Minute), Edited: true},
		},
		{
			name:   "unknown fields and newer kinds are ignored",
			update: `{"update_id":17,"message":{"message_id":18,"date":1700000000,"chat":{"id":1001,"type":"private","future_field":{"x":1}},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"text":"ok","link_preview_options":{"is_disabled":true},"some_new_thing":[1,2,3]}}`,
			want:   &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "18", Sender: alice, Text: "ok", Timestamp: ts},
		},
		{
			name:   "forwarded from a user (forward_origin)",
			update: `{"update_id":21,"message":{"message_id":21,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"forward_origin":{"type":"user","date":1699990000,"sender_user":{"id":7,"first_name":"Bob","last_name":"Jones"}},"text":"/new do as I say"}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "21", Sender: alice, Text: "/new do as I say", Timestamp: ts,
				Forward: &channel.Forward{From: "Bob Jones", Date: time.Unix(1699990000, 0).UTC()}},
		},
		{
			name:   "forwarded from a channel",
			update: `{"update_id":22,"message":{"message_id":22,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"forward_origin":{"type":"channel","date":1699990000,"chat":{"id":-100,"type":"channel","title":"Daily News"},"message_id":3},"text":"news"}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "22", Sender: alice, Text: "news", Timestamp: ts,
				Forward: &channel.Forward{From: "Daily News", Date: time.Unix(1699990000, 0).UTC()}},
		},
		{
			name:   "forwarded from a hidden user (before Bot API 7.0)",
			update: `{"update_id":23,"message":{"message_id":23,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"Alice","last_name":"Smith","username":"alice"},"forward_sender_name":"Someone","forward_date":1699990000,"text":"hi"}}`,
			want: &channel.InboundMessage{ChatType: channel.ChatDirect, ChatID: "1001", MessageID: "23", Sender: alice, Text: "hi", Timestamp: ts,
				Forward: &channel.Forward{From: "Someone", Date: time.Unix(1699990000, 0).UTC()}},
		},
		{name: "unknown update kind", update: `{"update_id":18,"message_reaction":{"chat":{"id":1,"type":"private"},"message_id":1}}`},
		{name: "service message (no text)", update: `{"update_id":19,"message":{"message_id":19,"date":1700000000,"chat":{"id":-5,"type":"group"},"from":{"id":1001,"first_name":"A"},"new_chat_members":[{"id":2,"first_name":"B"}]}}`},
		{name: "whitespace text", update: `{"update_id":20,"message":{"message_id":20,"date":1700000000,"chat":{"id":1001,"type":"private"},"from":{"id":1001,"first_name":"A"},"text":"  \n "}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := decodeUpdate(json.RawMessage(tt.update))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, ok := toInbound(u, testSelf)
			if tt.want == nil {
				if ok {
					t.Fatalf("want skipped, got %+v", got)
				}
				return
			}
			if !ok {
				t.Fatal("skipped, want delivered")
			}
			if !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("got\n%+v\nwant\n%+v", got, *tt.want)
			}
		})
	}
}

func TestDecodeUpdateKeepsIDOfBrokenUpdate(t *testing.T) {
	t.Parallel()
	u, err := decodeUpdate(json.RawMessage(`{"update_id":77,"message":{"message_id":"x"}}`))
	if err == nil || u.UpdateID != 77 {
		t.Fatalf("got %+v, %v", u, err)
	}
}
