// Package wire is the sdk's side of the protocol: conversion between the
// hand-written contract types and the generated proto types, the gRPC server
// shims a plugin runs, and the go-plugin glue. Only the sdk imports it.
package wire

import (
	"encoding/json"
	"time"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/status"
)

// ErrorToProto converts a business error; nil stays nil. Errors that are not
// *channel.Error become CodeInternal.
func ErrorToProto(err error) *pb.PluginError {
	if err == nil {
		return nil
	}
	if e, ok := err.(*channel.Error); ok {
		return &pb.PluginError{Code: string(e.Code), Message: e.Message, RetryAfterMs: e.RetryAfter.Milliseconds()}
	}
	return &pb.PluginError{Code: string(channel.CodeInternal), Message: err.Error()}
}

// ErrorFromProto converts a business error; nil stays nil.
func ErrorFromProto(e *pb.PluginError) error {
	if e == nil {
		return nil
	}
	return &channel.Error{Code: channel.Code(e.Code), Message: e.Message, RetryAfter: time.Duration(e.RetryAfterMs) * time.Millisecond}
}

// CapabilitiesToProto converts channel capabilities.
func CapabilitiesToProto(c channel.Capabilities) *pb.ChannelCapabilities {
	return &pb.ChannelCapabilities{
		MaxTextLength: int32(c.MaxTextLength),
		LengthUnit:    string(c.LengthUnit),
		Markdown:      string(c.Markup),
		Threads:       c.Threads,
		Groups:        c.Groups,
		MediaIn:       kindsToStrings(c.MediaIn),
		MediaOut:      kindsToStrings(c.MediaOut),
		DisplayName:   c.DisplayName,
		MaxLines:      int32(c.MaxLines),
		Buttons:       c.Buttons,
		MaxFileBytes:  c.MaxFileBytes,

		TypingLifetimeMs: int32(c.TypingLifetime / time.Millisecond),
		TypingLapses:     c.TypingLapses,
		IdForms:          IDFormsToProto(c.IDForms),
		DirectToSender:   c.DirectToSender,
		VoiceNoteFormat:  c.VoiceNoteFormat,
	}
}

// IDFormsToProto converts a channel's id forms.
func IDFormsToProto(fs []channel.IDForm) []*pb.IDForm {
	if len(fs) == 0 {
		return nil
	}
	out := make([]*pb.IDForm, len(fs))
	for i, f := range fs {
		out[i] = &pb.IDForm{Pattern: f.Pattern, Canonical: f.Canonical, Hint: f.Hint}
	}
	return out
}

// IDFormsFromProto converts a channel's id forms.
func IDFormsFromProto(fs []*pb.IDForm) []channel.IDForm {
	if len(fs) == 0 {
		return nil
	}
	out := make([]channel.IDForm, len(fs))
	for i, f := range fs {
		out[i] = channel.IDForm{Pattern: f.GetPattern(), Canonical: f.GetCanonical(), Hint: f.GetHint()}
	}
	return out
}

// ProbeToProto converts a probe report.
func ProbeToProto(r probe.Report) *pb.ProbeResponse {
	id := r.Identity
	out := &pb.ProbeResponse{Identity: &pb.ProbeIdentity{Id: id.ID, Handle: id.Handle, Name: id.Name, Link: id.Link}}
	for _, c := range r.Checks {
		out.Checks = append(out.Checks, &pb.ProbeCheck{Name: c.Name, Verdict: string(c.Verdict), Found: c.Found, Do: c.Do})
	}
	return out
}

// ProbeFromProto converts a probe report.
func ProbeFromProto(r *pb.ProbeResponse) probe.Report {
	id := r.GetIdentity()
	out := probe.Report{Identity: probe.Identity{ID: id.GetId(), Handle: id.GetHandle(), Name: id.GetName(), Link: id.GetLink()}}
	for _, c := range r.GetChecks() {
		out.Checks = append(out.Checks, probe.Check{Name: c.GetName(), Verdict: probe.ParseVerdict(c.GetVerdict()), Found: c.GetFound(), Do: c.GetDo()})
	}
	return out
}

// CapabilitiesFromProto converts channel capabilities, applying defaults.
func CapabilitiesFromProto(c *pb.ChannelCapabilities) channel.Capabilities {
	out := channel.Capabilities{
		MaxTextLength: int(c.GetMaxTextLength()),
		LengthUnit:    channel.ParseLengthUnit(c.GetLengthUnit()),
		Markup:        channel.ParseMarkup(c.GetMarkdown()),
		Threads:       c.GetThreads(),
		Groups:        c.GetGroups(),
		MediaIn:       stringsToKinds(c.GetMediaIn()),
		MediaOut:      stringsToKinds(c.GetMediaOut()),
		DisplayName:   c.GetDisplayName(),
		MaxLines:      int(c.GetMaxLines()),
		Buttons:       c.GetButtons(),
		MaxFileBytes:  c.GetMaxFileBytes(),

		TypingLifetime:  time.Duration(c.GetTypingLifetimeMs()) * time.Millisecond,
		TypingLapses:    c.GetTypingLapses(),
		IDForms:         IDFormsFromProto(c.GetIdForms()),
		DirectToSender:  c.GetDirectToSender(),
		VoiceNoteFormat: c.GetVoiceNoteFormat(),
	}
	if out.TypingLifetime < 0 {
		out.TypingLifetime = 0
	}
	if out.MaxLines < 0 {
		out.MaxLines = 0
	}
	if out.MaxFileBytes < 0 {
		out.MaxFileBytes = 0
	}
	if out.MaxTextLength <= 0 {
		out.MaxTextLength = 4000
	}
	return out
}

func kindsToStrings(ks []channel.MediaKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

func stringsToKinds(ss []string) []channel.MediaKind {
	if len(ss) == 0 {
		return nil
	}
	out := make([]channel.MediaKind, len(ss))
	for i, s := range ss {
		out[i] = channel.MediaKind(s)
	}
	return out
}

// SchemaToProto converts a config schema. Defaults are JSON encoded.
func SchemaToProto(s schema.Schema) ([]*pb.Attribute, error) {
	out := make([]*pb.Attribute, 0, len(s))
	for _, a := range s {
		var def string
		if a.Default != nil {
			b, err := json.Marshal(a.Default)
			if err != nil {
				return nil, err
			}
			def = string(b)
		}
		typ := a.Type
		if typ == "" {
			typ = "string"
		}
		out = append(out, &pb.Attribute{Name: a.Name, Type: typ, Required: a.Required, DefaultJson: def, Sensitive: a.Sensitive, Description: a.Description, Listen: a.Listen, ListenToken: a.ListenToken})
	}
	return out, nil
}

// SchemaFromProto converts a config schema; defaults stay JSON (as
// json.RawMessage) so the host can decode them against the type.
func SchemaFromProto(as []*pb.Attribute) schema.Schema {
	out := make(schema.Schema, 0, len(as))
	for _, a := range as {
		var def any
		if a.GetDefaultJson() != "" {
			def = json.RawMessage(a.GetDefaultJson())
		}
		out = append(out, schema.Attribute{Name: a.GetName(), Type: a.GetType(), Required: a.GetRequired(), Default: def, Sensitive: a.GetSensitive(), Description: a.GetDescription(), Listen: a.GetListen(), ListenToken: a.GetListenToken()})
	}
	return out
}

// DiagnosticsToProto converts plugin diagnostics.
func DiagnosticsToProto(d schema.Diagnostics) []*pb.Diagnostic {
	out := make([]*pb.Diagnostic, len(d))
	for i, x := range d {
		out[i] = &pb.Diagnostic{Attribute: x.Attribute, Summary: x.Summary, Detail: x.Detail}
		if x.Warning {
			out[i].Severity = "warning"
		}
	}
	return out
}

// DiagnosticsFromProto converts plugin diagnostics.
func DiagnosticsFromProto(d []*pb.Diagnostic) schema.Diagnostics {
	if len(d) == 0 {
		return nil
	}
	out := make(schema.Diagnostics, len(d))
	for i, x := range d {
		out[i] = schema.Diagnostic{Attribute: x.GetAttribute(), Summary: x.GetSummary(), Detail: x.GetDetail(), Warning: x.GetSeverity() == "warning"}
	}
	return out
}

// SenderToProto converts a sender.
func SenderToProto(s channel.Sender) *pb.Sender {
	return &pb.Sender{Id: s.ID, Name: s.Name, Username: s.Username, IsBot: s.IsBot, AltIds: s.AltIDs}
}

// SenderFromProto converts a sender.
func SenderFromProto(s *pb.Sender) channel.Sender {
	return channel.Sender{ID: s.GetId(), Name: s.GetName(), Username: s.GetUsername(), IsBot: s.GetIsBot(), AltIDs: s.GetAltIds()}
}

// InboundToProto converts an inbound message.
func InboundToProto(m channel.InboundMessage, id uint64) *pb.InboundMessage {
	out := &pb.InboundMessage{
		DeliveryId:    id,
		ChatType:      string(m.ChatType),
		ChatId:        m.ChatID,
		ThreadId:      m.ThreadID,
		MessageId:     m.MessageID,
		Sender:        SenderToProto(m.Sender),
		Text:          m.Text,
		CommandText:   m.CommandText,
		WasMentioned:  m.WasMentioned,
		ChatTitle:     m.ChatTitle,
		Edited:        m.Edited,
		OversizeBytes: m.OversizeBytes,
	}
	if a := m.Action; a != nil {
		out.Action = &pb.Action{ButtonId: a.ButtonID, MessageId: a.MessageID}
	}
	if iv := m.Invite; iv != nil {
		out.Invite = &pb.Invite{IsDirect: iv.IsDirect}
	}
	if f := m.Forward; f != nil {
		out.Forward = &pb.Forward{From: f.From}
		if !f.Date.IsZero() {
			out.Forward.DateMs = f.Date.UnixMilli()
		}
	}
	if !m.Timestamp.IsZero() {
		out.TimestampMs = m.Timestamp.UnixMilli()
	}
	if r := m.ReplyTo; r != nil {
		out.ReplyTo = &pb.ReplyTo{MessageId: r.MessageID, Text: r.Text, SenderId: r.SenderID, SenderName: r.SenderName, ToBot: r.ToBot}
	}
	for _, r := range m.ThreadContext {
		out.ThreadContext = append(out.ThreadContext, &pb.ReplyTo{MessageId: r.MessageID, Text: r.Text, SenderId: r.SenderID, SenderName: r.SenderName, ToBot: r.ToBot})
	}
	for _, md := range m.Media {
		out.Media = append(out.Media, &pb.Media{Kind: string(md.Kind), Ref: md.Ref, Mime: md.MIME, Size: md.Size, Filename: md.Filename, Caption: md.Caption})
	}
	return out
}

// InboundFromProto converts an inbound message.
func InboundFromProto(m *pb.InboundMessage) channel.InboundMessage {
	out := channel.InboundMessage{
		ChatType:      channel.ChatType(m.GetChatType()),
		ChatID:        m.GetChatId(),
		ThreadID:      m.GetThreadId(),
		MessageID:     m.GetMessageId(),
		Sender:        SenderFromProto(m.GetSender()),
		Text:          m.GetText(),
		CommandText:   m.GetCommandText(),
		WasMentioned:  m.GetWasMentioned(),
		ChatTitle:     m.GetChatTitle(),
		Edited:        m.GetEdited(),
		OversizeBytes: m.GetOversizeBytes(),
	}
	if a := m.GetAction(); a != nil {
		out.Action = &channel.Action{ButtonID: a.GetButtonId(), MessageID: a.GetMessageId()}
	}
	if iv := m.GetInvite(); iv != nil {
		out.Invite = &channel.Invite{IsDirect: iv.GetIsDirect()}
	}
	if f := m.GetForward(); f != nil {
		out.Forward = &channel.Forward{From: f.GetFrom()}
		if ms := f.GetDateMs(); ms != 0 {
			out.Forward.Date = time.UnixMilli(ms)
		}
	}
	if ms := m.GetTimestampMs(); ms != 0 {
		out.Timestamp = time.UnixMilli(ms)
	}
	if r := m.GetReplyTo(); r != nil {
		out.ReplyTo = &channel.ReplyTo{MessageID: r.GetMessageId(), Text: r.GetText(), SenderID: r.GetSenderId(), SenderName: r.GetSenderName(), ToBot: r.GetToBot()}
	}
	for _, r := range m.GetThreadContext() {
		out.ThreadContext = append(out.ThreadContext, channel.ReplyTo{MessageID: r.GetMessageId(), Text: r.GetText(), SenderID: r.GetSenderId(), SenderName: r.GetSenderName(), ToBot: r.GetToBot()})
	}
	for _, md := range m.GetMedia() {
		out.Media = append(out.Media, channel.Media{Kind: channel.MediaKind(md.GetKind()), Ref: md.GetRef(), MIME: md.GetMime(), Size: md.GetSize(), Filename: md.GetFilename(), Caption: md.GetCaption()})
	}
	return out
}

// MediaToProto converts outbound media.
func MediaToProto(ms []channel.OutboundMedia) []*pb.OutboundMedia {
	var out []*pb.OutboundMedia
	for _, m := range ms {
		out = append(out, &pb.OutboundMedia{Path: m.Path, Kind: string(m.Kind), Mime: m.MIME, Caption: m.Caption, RenderedCaption: RenderedToProto(m.CaptionRendered)})
	}
	return out
}

// MediaFromProto converts outbound media.
func MediaFromProto(ms []*pb.OutboundMedia) []channel.OutboundMedia {
	var out []channel.OutboundMedia
	for _, m := range ms {
		out = append(out, channel.OutboundMedia{Path: m.GetPath(), Kind: channel.MediaKind(m.GetKind()), MIME: m.GetMime(), Caption: m.GetCaption(), CaptionRendered: RenderedFromProto(m.GetRenderedCaption())})
	}
	return out
}

// SendToProto converts a send request.
func SendToProto(r channel.SendRequest) *pb.SendRequest {
	return &pb.SendRequest{ChatId: r.ChatID, ThreadId: r.ThreadID, ReplyToMessageId: r.ReplyToMessageID, Text: r.Text, Format: string(r.Format), Media: MediaToProto(r.Media), DisableLinkPreview: r.DisableLinkPreview, Silent: r.Silent, Buttons: ButtonsToProto(r.Buttons), Rendered: RenderedToProto(r.Rendered)}
}

// SendFromProto converts a send request.
func SendFromProto(r *pb.SendRequest) channel.SendRequest {
	return channel.SendRequest{ChatID: r.GetChatId(), ThreadID: r.GetThreadId(), ReplyToMessageID: r.GetReplyToMessageId(), Text: r.GetText(), Format: channel.Format(r.GetFormat()), Media: MediaFromProto(r.GetMedia()), DisableLinkPreview: r.GetDisableLinkPreview(), Silent: r.GetSilent(), Buttons: ButtonsFromProto(r.GetButtons()), Rendered: RenderedFromProto(r.GetRendered())}
}

// EditToProto converts an edit request.
func EditToProto(r channel.EditRequest) *pb.EditRequest {
	return &pb.EditRequest{ChatId: r.ChatID, ThreadId: r.ThreadID, MessageId: r.MessageID, Text: r.Text, Format: string(r.Format), Buttons: ButtonsToProto(r.Buttons), Rendered: RenderedToProto(r.Rendered)}
}

// EditFromProto converts an edit request.
func EditFromProto(r *pb.EditRequest) channel.EditRequest {
	return channel.EditRequest{ChatID: r.GetChatId(), ThreadID: r.GetThreadId(), MessageID: r.GetMessageId(), Text: r.GetText(), Format: channel.Format(r.GetFormat()), Buttons: ButtonsFromProto(r.GetButtons()), Rendered: RenderedFromProto(r.GetRendered())}
}

// RenderedToProto converts a send's rendering; nil stays nil.
func RenderedToProto(r *channel.Rendered) *pb.RenderedText {
	if r == nil {
		return nil
	}
	return &pb.RenderedText{Markup: string(r.Markup), Text: r.Text, Visible: r.Visible}
}

// RenderedFromProto converts a send's rendering; nil stays nil.
func RenderedFromProto(r *pb.RenderedText) *channel.Rendered {
	if r == nil {
		return nil
	}
	return &channel.Rendered{Markup: channel.Markup(r.GetMarkup()), Text: r.GetText(), Visible: r.GetVisible()}
}

// ButtonsToProto converts rows of buttons.
func ButtonsToProto(rows [][]channel.Button) []*pb.ButtonRow {
	var out []*pb.ButtonRow
	for _, row := range rows {
		r := &pb.ButtonRow{}
		for _, b := range row {
			r.Buttons = append(r.Buttons, &pb.Button{Id: b.ID, Label: b.Label})
		}
		out = append(out, r)
	}
	return out
}

// ButtonsFromProto converts rows of buttons.
func ButtonsFromProto(rows []*pb.ButtonRow) [][]channel.Button {
	var out [][]channel.Button
	for _, r := range rows {
		var row []channel.Button
		for _, b := range r.GetButtons() {
			row = append(row, channel.Button{ID: b.GetId(), Label: b.GetLabel()})
		}
		out = append(out, row)
	}
	return out
}

// ChatMenuToProto converts a chat's command menu (ChatID "" is the
// default menu).
func ChatMenuToProto(m channel.ChatMenu) *pb.SetCommandsRequest {
	out := &pb.SetCommandsRequest{ChatId: m.ChatID, Commands: make([]*pb.CommandSpec, len(m.Commands))}
	for i, e := range m.Commands {
		out.Commands[i] = &pb.CommandSpec{Name: e.Name, Description: e.Description}
	}
	return out
}

// ChatMenuFromProto converts a SetCommands request.
func ChatMenuFromProto(r *pb.SetCommandsRequest) channel.ChatMenu {
	out := channel.ChatMenu{ChatID: r.GetChatId(), Commands: make([]channel.MenuEntry, 0, len(r.GetCommands()))}
	for _, c := range r.GetCommands() {
		out.Commands = append(out.Commands, channel.MenuEntry{Name: c.GetName(), Description: c.GetDescription()})
	}
	return out
}

// StatusToProto converts a plugin's status report.
func StatusToProto(s status.Status) *pb.PluginStatus {
	out := &pb.PluginStatus{State: string(s.State), Message: s.Message}
	if out.State == "" {
		out.State = string(status.Ready)
	}
	if a := s.Attention; a != nil {
		out.Attention = &pb.Attention{Kind: string(a.Kind), Data: a.Data, Retry: a.Retry}
		if !a.ExpiresAt.IsZero() {
			out.Attention.ExpiresAtMs = a.ExpiresAt.UnixMilli()
		}
	}
	return out
}

// StatusFromProto converts a plugin's status report. An unknown state is
// kept as sent (the host shows it as not ready).
func StatusFromProto(s *pb.PluginStatus) status.Status {
	out := status.Status{State: status.State(s.GetState()), Message: s.GetMessage()}
	if out.State == "" {
		out.State = status.Ready
	}
	if a := s.GetAttention(); a != nil {
		out.Attention = &status.Attention{Kind: status.AttentionKind(a.GetKind()), Data: a.GetData(), Retry: a.GetRetry()}
		if ms := a.GetExpiresAtMs(); ms > 0 {
			out.Attention.ExpiresAt = time.UnixMilli(ms)
		}
	}
	return out
}

// msToTime converts Unix milliseconds; 0 is the zero time.
func msToTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// timeToMs converts a time to Unix milliseconds; the zero time is 0.
func timeToMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
