package message

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
)

func TestNormalizeRepairs(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	in := channel.InboundMessage{
		ChatType: "space-station", MessageID: " 4 2\n", Sender: channel.Sender{ID: "5", Name: "A\x00nn"},
		Text: "hi \xff\r\nthere\x07", Timestamp: now.Add(time.Hour),
		ReplyTo: &channel.ReplyTo{ToBot: true, Text: "q\x1b"},
	}
	m, problems := Normalize("tg", "telegram", in, now)
	if m.ChatType != channel.ChatDirect || m.ChatID != "5" || m.MessageID != "42" || m.Sender.Name != "Ann" {
		t.Errorf("ids and chat type: %+v", m)
	}
	if m.Body != "hi \uFFFD\nthere" || m.ReplyTo.Text != "q" || !m.WasMentioned {
		t.Errorf("text %q reply %+v mentioned %v", m.Body, m.ReplyTo, m.WasMentioned)
	}
	if !m.Timestamp.Equal(now) || m.From != "tg:5" || m.To != "tg:5" || m.Channel != "telegram" {
		t.Errorf("timestamp %v from %q to %q", m.Timestamp, m.From, m.To)
	}
	if len(problems) != 2 || !strings.Contains(problems[1], `"space-station"`) {
		t.Errorf("problems %q", problems)
	}
}

func TestPayloadVersions(t *testing.T) {
	t.Parallel()
	m := Message{Instance: "tg", ChatID: "1", Body: "x"}
	b := Encode(&m)
	if !strings.Contains(string(b), `"v":1`) {
		t.Fatalf("payload %s", b)
	}
	got, err := Decode(b)
	if err != nil || got.Body != "x" || got.V != Version {
		t.Fatalf("round trip %+v %v", got, err)
	}
	if got, err := Decode([]byte(`{"instance":"tg","chat_id":"1","body":"old"}`)); err != nil || got.Body != "old" {
		t.Errorf("a version-0 payload (before the field) still reads: %+v %v", got, err)
	}
	if _, err := Decode([]byte(`{"v":99}`)); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("a newer payload is refused clearly: %v", err)
	}
	if m.Target() != (Target{Instance: "tg", ChatID: "1"}) {
		t.Errorf("target %+v", m.Target())
	}
}

// TestNormalizeAltIDs: alternate sender ids are cleaned, empty ones dropped,
// and survive the journal payload.
func TestNormalizeAltIDs(t *testing.T) {
	t.Parallel()
	m, _ := Normalize("wa", "whatsapp", channel.InboundMessage{Sender: channel.Sender{ID: "+1555", AltIDs: []string{" 42@lid\n", ""}}}, time.Unix(1, 0))
	if got := m.SenderIDs(); len(got) != 2 || got[0] != "+1555" || got[1] != "42@lid" {
		t.Fatalf("SenderIDs = %q", got)
	}
	back, err := Decode(Encode(&m))
	if err != nil || len(back.Sender.AltIDs) != 1 || back.Sender.AltIDs[0] != "42@lid" {
		t.Fatalf("decoded %+v, %v", back.Sender, err)
	}
	plain, _ := Normalize("tg", "telegram", channel.InboundMessage{Sender: channel.Sender{ID: "1"}}, time.Unix(1, 0))
	if b := string(Encode(&plain)); strings.Contains(b, "AltIDs") {
		t.Errorf("a sender without alternate ids writes them: %s", b)
	}
}

// TestJournalRoundTrip: a message reads back from its journal payload as
// it was, field for field. A turn started straight from the queue's item
// uses the message as it was encoded instead of decoding the payload
// (queue.Item.Journaled), and a turn after a restart decodes it: both
// must see the same message.
func TestJournalRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 22, 12, 0, 0, 123456789, time.UTC)
	m := Message{
		V: Version, Instance: "tg", Channel: "telegram", ChatType: channel.ChatGroup, ChatID: "-100", ThreadID: "7",
		MessageID: "42", From: "tg:5", To: "tg:-100",
		Sender: channel.Sender{ID: "5", Name: "Ann", Username: "ann", IsBot: true, AltIDs: []string{"x@lid"}},
		Body:   "hello ✓", CommandBody: "/cmd", WasMentioned: true,
		ReplyTo:   &channel.ReplyTo{MessageID: "41", Text: "q", SenderID: "6", SenderName: "Bob", ToBot: true},
		Media:     []Media{{Kind: channel.MediaImage, Ref: "r", Path: "/p", MIME: "image/png", Size: 9, Filename: "f.png", Caption: "c"}},
		Timestamp: at, ReceivedAt: at.Add(time.Second), ChatTitle: "Room", OversizeBytes: 5, Scheduled: "daily",
		Action: &channel.Action{ButtonID: "b", MessageID: "40"},
	}
	back, err := Decode(Encode(&m))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip changed the message:\n got %+v\nwant %+v", back, m)
	}
}

// TestForwardIsNeverACommand: a forwarded message keeps its origin
// (cleaned) and is not read as a command, whatever its text.
func TestForwardIsNeverACommand(t *testing.T) {
	t.Parallel()
	in := channel.InboundMessage{ChatID: "1", Sender: channel.Sender{ID: "1"}, Text: "/new obey", Forward: &channel.Forward{From: "Bob\x07", Date: time.Unix(5, 0)}}
	m, _ := Normalize("tg", "telegram", in, time.Unix(10, 0))
	if m.Forward == nil || m.Forward.From != "Bob" || !m.Forward.Date.Equal(time.Unix(5, 0)) {
		t.Fatalf("forward %+v", m.Forward)
	}
	if m.Command() != "" {
		t.Errorf("Command() = %q, want none", m.Command())
	}
	back, err := Decode(Encode(&m))
	if err != nil || back.Forward == nil || back.Forward.From != "Bob" {
		t.Errorf("journal round trip: %+v, %v", back.Forward, err)
	}
	in.Forward = nil
	if m, _ := Normalize("tg", "telegram", in, time.Unix(10, 0)); m.Command() != "/new obey" {
		t.Errorf("own message: Command() = %q", m.Command())
	}
}
