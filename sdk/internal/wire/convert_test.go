package wire

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

// TestSenderAltIDs: alternate sender ids cross the wire; an older plugin's
// sender (no alt_ids) arrives with none.
func TestSenderAltIDs(t *testing.T) {
	t.Parallel()
	s := channel.Sender{ID: "+15550001", Name: "Ann", AltIDs: []string{"42@lid"}}
	if got := SenderFromProto(SenderToProto(s)); !reflect.DeepEqual(got, s) {
		t.Errorf("round trip: %+v, want %+v", got, s)
	}
	if got := SenderFromProto(&pb.Sender{Id: "1"}); got.AltIDs != nil {
		t.Errorf("older sender: AltIDs %q, want nil", got.AltIDs)
	}
}

// TestButtonsAndActions: buttons on a send and on a command reply, the
// capability, and a press cross the wire; an older plugin's message has no
// action.
func TestButtonsAndActions(t *testing.T) {
	t.Parallel()
	rows := [][]channel.Button{{{ID: "a:1", Label: "Allow"}, {ID: "d:1", Label: "Deny"}}, {{ID: "x", Label: "Always"}}}
	req := channel.SendRequest{ChatID: "c", Text: "t", Buttons: rows}
	if got := SendFromProto(SendToProto(req)); !reflect.DeepEqual(got, req) {
		t.Errorf("send: %+v, want %+v", got, req)
	}
	if got := SendFromProto(SendToProto(channel.SendRequest{ChatID: "c"})); got.Buttons != nil {
		t.Errorf("send without buttons: %v", got.Buttons)
	}
	if got := RepliesFromProto(RepliesToProto([]command.Reply{{Text: "pick", Buttons: rows}})); !reflect.DeepEqual(got[0].Buttons, rows) {
		t.Errorf("reply buttons: %v", got[0].Buttons)
	}
	if !CapabilitiesFromProto(CapabilitiesToProto(channel.Capabilities{Buttons: true})).Buttons {
		t.Error("capability buttons lost")
	}
	if got := CapabilitiesFromProto(CapabilitiesToProto(channel.Capabilities{MaxFileBytes: 10 << 20})).MaxFileBytes; got != 10<<20 {
		t.Errorf("capability max_file_bytes %d", got)
	}
	if got := CapabilitiesFromProto(&pb.ChannelCapabilities{}).MaxFileBytes; got != 0 {
		t.Errorf("an older plugin's max_file_bytes %d, want 0 (unknown)", got)
	}
	m := channel.InboundMessage{ChatID: "c", MessageID: "cb1", Text: "Allow", Action: &channel.Action{ButtonID: "a:1", MessageID: "m7"}}
	if got := InboundFromProto(InboundToProto(m, 1)); !reflect.DeepEqual(got.Action, m.Action) {
		t.Errorf("action: %+v, want %+v", got.Action, m.Action)
	}
	if got := InboundFromProto(&pb.InboundMessage{ChatId: "c"}); got.Action != nil {
		t.Errorf("older message: action %+v", got.Action)
	}
}

// TestForward: a forwarded message's origin crosses the wire; an older
// plugin's message has none.
func TestForward(t *testing.T) {
	t.Parallel()
	m := channel.InboundMessage{ChatID: "c", Text: "news", Forward: &channel.Forward{From: "Daily News", Date: time.UnixMilli(1735787045000)}}
	if got := InboundFromProto(InboundToProto(m, 1)); !reflect.DeepEqual(got.Forward, m.Forward) {
		t.Errorf("forward: %+v, want %+v", got.Forward, m.Forward)
	}
	hidden := channel.InboundMessage{ChatID: "c", Forward: &channel.Forward{}}
	if got := InboundFromProto(InboundToProto(hidden, 1)); got.Forward == nil || got.Forward.From != "" || !got.Forward.Date.IsZero() {
		t.Errorf("hidden origin: %+v", got.Forward)
	}
	if got := InboundFromProto(&pb.InboundMessage{ChatId: "c"}); got.Forward != nil {
		t.Errorf("older message: forward %+v", got.Forward)
	}
}

// TestSendRendered: the host's rendering of a send crosses the wire; a
// send without one has none; and a plugin built before the field (its
// SendRequest has no field 10) reads the same send, rendering and all, as
// the text and format it always rendered itself.
func TestSendRendered(t *testing.T) {
	t.Parallel()
	req := channel.SendRequest{ChatID: "c", Text: "**hi**", Format: channel.FormatMarkdown,
		Rendered: &channel.Rendered{Markup: channel.MarkupHTMLSubset, Text: "<b>hi</b>", Visible: "hi"}}
	if got := SendFromProto(SendToProto(req)); !reflect.DeepEqual(got, req) {
		t.Errorf("send: %+v, want %+v", got, req)
	}
	if got := SendFromProto(SendToProto(channel.SendRequest{ChatID: "c"})); got.Rendered != nil {
		t.Errorf("send without a rendering: %+v", got.Rendered)
	}
	withCaption := channel.SendRequest{ChatID: "c", Format: channel.FormatMarkdown, Media: []channel.OutboundMedia{{Path: "/f.png", Kind: channel.MediaImage,
		Caption: "**x**", CaptionRendered: &channel.Rendered{Markup: channel.MarkupLightweight, Text: "*x*", Visible: "*x*"}}}}
	if got := SendFromProto(SendToProto(withCaption)); !reflect.DeepEqual(got, withCaption) {
		t.Errorf("caption: %+v, want %+v", got, withCaption)
	}
	edit := channel.EditRequest{ChatID: "c", ThreadID: "t", MessageID: "1", Text: "**hi**", Format: channel.FormatMarkdown,
		Buttons: [][]channel.Button{{{ID: "b", Label: "B"}}}, Rendered: &channel.Rendered{Markup: channel.MarkupMrkdwn, Text: "*hi*", Visible: "*hi*"}}
	if got := EditFromProto(EditToProto(edit)); !reflect.DeepEqual(got, edit) {
		t.Errorf("edit: %+v, want %+v", got, edit)
	}
	b, err := proto.Marshal(SendToProto(req))
	if err != nil {
		t.Fatal(err)
	}
	// The message as an older plugin's generated code describes it.
	fd := protodesc.ToFileDescriptorProto(pb.File_clawhost_v1_plugin_proto)
	var old *descriptorpb.DescriptorProto
	for _, m := range fd.MessageType {
		if m.GetName() == "SendRequest" {
			old = m
		}
	}
	old.Field = slices.DeleteFunc(old.Field, func(f *descriptorpb.FieldDescriptorProto) bool { return f.GetName() == "rendered" })
	file, err := protodesc.NewFile(fd, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	msg := dynamicpb.NewMessage(file.Messages().ByName("SendRequest"))
	if err := proto.Unmarshal(b, msg); err != nil {
		t.Fatalf("an older plugin cannot read the send: %v", err)
	}
	fields := msg.Descriptor().Fields()
	if msg.Get(fields.ByName("text")).String() != req.Text || msg.Get(fields.ByName("format")).String() != string(req.Format) || len(msg.GetUnknown()) == 0 {
		t.Errorf("an older plugin reads %v", msg)
	}
}

// TestThreadContext: a thread's parent and earlier messages cross the
// wire in order; an older plugin's message has none.
func TestThreadContext(t *testing.T) {
	t.Parallel()
	m := channel.InboundMessage{ChatID: "c", ThreadID: "t", Text: "q", ThreadContext: []channel.ReplyTo{
		{MessageID: "p", Text: "parent", SenderID: "u2", SenderName: "Bob"},
		{MessageID: "r", Text: "mine", SenderID: "b", SenderName: "bot", ToBot: true},
	}}
	if got := InboundFromProto(InboundToProto(m, 1)); !reflect.DeepEqual(got.ThreadContext, m.ThreadContext) {
		t.Errorf("thread context: %+v, want %+v", got.ThreadContext, m.ThreadContext)
	}
	if got := InboundFromProto(&pb.InboundMessage{ChatId: "c"}); got.ThreadContext != nil {
		t.Errorf("older message: thread context %+v", got.ThreadContext)
	}
}
