package wire

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
	"github.com/clawhost/clawhost/sdk/tool"
)

// filler sets every exported field of a value, recursively, to a value of
// its own (strings "s1", "s2", …; numbers 1, 2, …; true; two elements a
// slice), so that a conversion that drops or mixes up a field shows in a
// round trip — also a field added to the contract later, with no test of
// its own.
type filler struct{ n int }

var (
	timeType     = reflect.TypeOf(time.Time{})
	durationType = reflect.TypeOf(time.Duration(0))
	// closedSets are typed strings the wire reads into one of their
	// constants: the filler sets a constant that is not the default.
	closedSets = map[reflect.Type]string{
		reflect.TypeOf(channel.LengthUnit("")): string(channel.LengthRunes),
		reflect.TypeOf(channel.Markup("")):     string(channel.MarkupHTMLSubset),
		reflect.TypeOf(channel.Format("")):     string(channel.FormatMarkdown),
		reflect.TypeOf(probe.Verdict("")):      string(probe.Fail),
	}
)

func (f *filler) fill(v reflect.Value) {
	f.n++
	switch {
	case v.Type() == timeType:
		// The wire carries milliseconds.
		v.Set(reflect.ValueOf(time.UnixMilli(int64(1_700_000_000_000 + f.n))))
		return
	case v.Type() == durationType:
		v.SetInt(int64(time.Duration(f.n) * time.Millisecond))
		return
	}
	if c, ok := closedSets[v.Type()]; ok {
		v.SetString(c)
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(f.n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(f.n) + 0.5)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			f.fill(s.Index(i))
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k)
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		v.Set(reflect.ValueOf(fmt.Sprintf("s%d", f.n))) // a JSON value (schema defaults)
	}
}

// filled is a T with every field set.
func filled[T any]() T {
	var v T
	(&filler{}).fill(reflect.ValueOf(&v).Elem())
	return v
}

// roundTrip checks that v survives the trip to the protocol and back.
func roundTrip[T any](t *testing.T, v T, to func(T) any, from func(any) T) {
	t.Helper()
	if got := from(to(v)); !reflect.DeepEqual(got, v) {
		t.Errorf("%T does not survive the wire:\n got %+v\nwant %+v", v, got, v)
	}
}

// TestRoundTrips: every contract value the wire carries, with every field
// set, is the same after contract → proto → contract (one table per
// family, terraform-plugin-go's shape).
func TestRoundTrips(t *testing.T) {
	t.Parallel()
	t.Run("channel", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, filled[channel.Capabilities](), func(v channel.Capabilities) any { return CapabilitiesToProto(v) },
			func(p any) channel.Capabilities { return CapabilitiesFromProto(p.(*pb.ChannelCapabilities)) })
		roundTrip(t, filled[channel.Sender](), func(v channel.Sender) any { return SenderToProto(v) },
			func(p any) channel.Sender { return SenderFromProto(p.(*pb.Sender)) })
		in := filled[channel.InboundMessage]()
		roundTrip(t, in, func(v channel.InboundMessage) any { return InboundToProto(v, 7) },
			func(p any) channel.InboundMessage { return InboundFromProto(p.(*pb.InboundMessage)) })
		roundTrip(t, filled[channel.SendRequest](), func(v channel.SendRequest) any { return SendToProto(v) },
			func(p any) channel.SendRequest { return SendFromProto(p.(*pb.SendRequest)) })
		roundTrip(t, filled[[]channel.OutboundMedia](), func(v []channel.OutboundMedia) any { return MediaToProto(v) },
			func(p any) []channel.OutboundMedia { return MediaFromProto(p.([]*pb.OutboundMedia)) })
		roundTrip(t, filled[[][]channel.Button](), func(v [][]channel.Button) any { return ButtonsToProto(v) },
			func(p any) [][]channel.Button { return ButtonsFromProto(p.([]*pb.ButtonRow)) })
		roundTrip(t, filled[channel.ChatMenu](), func(v channel.ChatMenu) any { return ChatMenuToProto(v) },
			func(p any) channel.ChatMenu { return ChatMenuFromProto(p.(*pb.SetCommandsRequest)) })
		var err error = &channel.Error{Code: channel.CodeRateLimited, Message: "slow down", RetryAfter: 1500 * time.Millisecond}
		roundTrip(t, err, func(v error) any { return ErrorToProto(v) }, func(p any) error { return ErrorFromProto(p.(*pb.PluginError)) })
	})
	t.Run("command", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, filled[[]command.Spec](), func(v []command.Spec) any { return SpecsToProto(v) },
			func(p any) []command.Spec { return SpecsFromProto(p.([]*pb.CommandSpec)) })
		roundTrip(t, filled[command.Conversation](), func(v command.Conversation) any { return ConversationToProto(v) },
			func(p any) command.Conversation { return ConversationFromProto(p.(*pb.Conversation)) })
		roundTrip(t, filled[command.Request](), func(v command.Request) any { return ExecuteToProto(v) },
			func(p any) command.Request { return ExecuteFromProto(p.(*pb.ExecuteRequest)) })
		roundTrip(t, filled[[]command.Reply](), func(v []command.Reply) any { return RepliesToProto(v) },
			func(p any) []command.Reply { return RepliesFromProto(p.([]*pb.Reply)) })
	})
	t.Run("hook", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, filled[hook.Request](), func(v hook.Request) any { return HookToProto(v) },
			func(p any) hook.Request { return HookFromProto(p.(*pb.BeforeAgentStartRequest)) })
		roundTrip(t, filled[hook.ReceivedRequest](), func(v hook.ReceivedRequest) any { return ReceivedToProto(v) },
			func(p any) hook.ReceivedRequest { return ReceivedFromProto(p.(*pb.MessageReceivedRequest)) })
		roundTrip(t, filled[hook.ReceivedResponse](), func(v hook.ReceivedResponse) any { return ReceivedResponseToProto(v) },
			func(p any) hook.ReceivedResponse { return ReceivedResponseFromProto(p.(*pb.MessageReceivedResponse)) })
		roundTrip(t, filled[hook.SendingRequest](), func(v hook.SendingRequest) any { return SendingToProto(v) },
			func(p any) hook.SendingRequest { return SendingFromProto(p.(*pb.MessageSendingRequest)) })
		roundTrip(t, filled[hook.SendingResponse](), func(v hook.SendingResponse) any { return SendingResponseToProto(v) },
			func(p any) hook.SendingResponse { return SendingResponseFromProto(p.(*pb.MessageSendingResponse)) })
		roundTrip(t, filled[hook.End](), func(v hook.End) any { return EndToProto(v) },
			func(p any) hook.End { return EndFromProto(p.(*pb.AgentEndRequest)) })
	})
	t.Run("tool", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, filled[[]tool.Spec](), func(v []tool.Spec) any { return ToolSpecsToProto(v) },
			func(p any) []tool.Spec { return ToolSpecsFromProto(p.([]*pb.ToolSpec)) })
		roundTrip(t, filled[tool.CallRequest](), func(v tool.CallRequest) any { return ToolCallToProto(v) },
			func(p any) tool.CallRequest { return ToolCallFromProto(p.(*pb.CallToolRequest)) })
		roundTrip(t, filled[tool.Result](), func(v tool.Result) any { return ToolResultToProto(v) },
			func(p any) tool.Result { return ToolResultFromProto(p.(*pb.CallToolResponse)) })
	})
	t.Run("schema", func(t *testing.T) {
		t.Parallel()
		// A default arrives as the JSON it was sent as (the host decodes
		// it against the attribute's type).
		s := filled[schema.Schema]()
		p, err := SchemaToProto(s)
		if err != nil {
			t.Fatal(err)
		}
		back := SchemaFromProto(p)
		for i := range s {
			raw, _ := json.Marshal(s[i].Default)
			s[i].Default = json.RawMessage(raw)
		}
		if !reflect.DeepEqual(back, s) {
			t.Errorf("schema.Schema does not survive the wire:\n got %+v\nwant %+v", back, s)
		}
		roundTrip(t, filled[schema.Diagnostics](), func(v schema.Diagnostics) any { return DiagnosticsToProto(v) },
			func(p any) schema.Diagnostics { return DiagnosticsFromProto(p.([]*pb.Diagnostic)) })
	})
	t.Run("probe", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, filled[probe.Report](), func(v probe.Report) any { return ProbeToProto(v) },
			func(p any) probe.Report { return ProbeFromProto(p.(*pb.ProbeResponse)) })
	})
	t.Run("status", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, filled[status.Status](), func(v status.Status) any { return StatusToProto(v) },
			func(p any) status.Status { return StatusFromProto(p.(*pb.PluginStatus)) })
	})
}

// TestFillerSetsEveryField: the filler leaves no exported field zero (a
// field it skipped would round-trip as zero and hide a dropped one).
func TestFillerSetsEveryField(t *testing.T) {
	t.Parallel()
	var zero func(reflect.Value, string) []string
	zero = func(v reflect.Value, path string) (out []string) {
		if v.IsZero() {
			return []string{path}
		}
		if v.Kind() == reflect.Struct && v.Type() != timeType {
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					out = append(out, zero(v.Field(i), path+"."+f.Name)...)
				}
			}
		}
		return out
	}
	for _, v := range []any{filled[channel.InboundMessage](), filled[command.Request](), filled[status.Status](), filled[channel.Capabilities](), filled[probe.Report](),
		filled[hook.ReceivedRequest](), filled[hook.ReceivedResponse](), filled[hook.SendingRequest](), filled[hook.SendingResponse](), filled[hook.End](),
		filled[tool.CallRequest](), filled[tool.Result]()} {
		if z := zero(reflect.ValueOf(v), fmt.Sprintf("%T", v)); len(z) > 0 {
			t.Errorf("left zero: %v", z)
		}
	}
}

// TestCapabilitiesOfOlderPlugins: a plugin built against an sdk before the
// typed Markup declared a platform's flavour; the host reads it as the
// kind of markup it is, and reads what it does not know as none.
func TestCapabilitiesOfOlderPlugins(t *testing.T) {
	t.Parallel()
	for wire, want := range map[string]channel.Markup{
		"":              channel.MarkupNone,
		"none":          channel.MarkupNone,
		"commonmark":    channel.MarkupMarkdown,
		"discord":       channel.MarkupMarkdown,
		"telegram_html": channel.MarkupHTMLSubset,
		"whatsapp":      channel.MarkupLightweight,
		"markdown":      channel.MarkupMarkdown,
		"html-subset":   channel.MarkupHTMLSubset,
		"lightweight":   channel.MarkupLightweight,
		"bbcode":        channel.MarkupNone,
	} {
		if got := CapabilitiesFromProto(&pb.ChannelCapabilities{Markdown: wire}).Markup; got != want {
			t.Errorf("markdown %q on the wire read as %q, want %q", wire, got, want)
		}
	}
	for wire, want := range map[string]channel.LengthUnit{"": channel.LengthUTF16, "utf16": channel.LengthUTF16, "runes": channel.LengthRunes, "bytes": channel.LengthBytes, "graphemes": channel.LengthUTF16} {
		if got := CapabilitiesFromProto(&pb.ChannelCapabilities{LengthUnit: wire}).LengthUnit; got != want {
			t.Errorf("length_unit %q on the wire read as %q, want %q", wire, got, want)
		}
	}
}
