// Package wire is the sdk's side of the protocol: conversion between the
// hand-written contract types and the generated proto types, the gRPC server
// shims a plugin runs, and the go-plugin glue. Only the sdk imports it.
package wire

import (
	"encoding/json"
	"time"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
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

// SpecsToProto converts command specs.
func SpecsToProto(ss []command.Spec) []*pb.CommandSpec {
	out := make([]*pb.CommandSpec, len(ss))
	for i, s := range ss {
		out[i] = &pb.CommandSpec{Name: s.Name, Aliases: s.Aliases, Description: s.Description, OwnerOnly: s.OwnerOnly, Usage: s.Usage}
	}
	return out
}

// SpecsFromProto converts command specs.
func SpecsFromProto(ss []*pb.CommandSpec) []command.Spec {
	out := make([]command.Spec, len(ss))
	for i, s := range ss {
		out[i] = command.Spec{Name: s.GetName(), Aliases: s.GetAliases(), Description: s.GetDescription(), OwnerOnly: s.GetOwnerOnly(), Usage: s.GetUsage()}
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

// ConversationToProto converts a conversation.
func ConversationToProto(c command.Conversation) *pb.Conversation {
	return &pb.Conversation{SessionKey: c.SessionKey, Instance: c.Instance, Channel: c.Channel, ChatType: string(c.ChatType), ChatId: c.ChatID, ThreadId: c.ThreadID}
}

// ConversationFromProto converts a conversation.
func ConversationFromProto(c *pb.Conversation) command.Conversation {
	return command.Conversation{SessionKey: c.GetSessionKey(), Instance: c.GetInstance(), Channel: c.GetChannel(), ChatType: channel.ChatType(c.GetChatType()), ChatID: c.GetChatId(), ThreadID: c.GetThreadId()}
}

// ExecuteToProto converts a command request.
func ExecuteToProto(r command.Request) *pb.ExecuteRequest {
	return &pb.ExecuteRequest{Command: r.Command, Args: r.Args, RawText: r.RawText, Conversation: ConversationToProto(r.Conversation), Sender: SenderToProto(r.Sender), SenderIsOwner: r.SenderIsOwner,
		SenderIsMember: r.SenderIsMember, Workdir: r.Workdir, WorktreeBranch: r.WorktreeBranch}
}

// ExecuteFromProto converts a command request.
func ExecuteFromProto(r *pb.ExecuteRequest) command.Request {
	return command.Request{Command: r.GetCommand(), Args: r.GetArgs(), RawText: r.GetRawText(), Conversation: ConversationFromProto(r.GetConversation()), Sender: SenderFromProto(r.GetSender()), SenderIsOwner: r.GetSenderIsOwner(),
		SenderIsMember: r.GetSenderIsMember(), Workdir: r.GetWorkdir(), WorktreeBranch: r.GetWorktreeBranch()}
}

// RepliesToProto converts command replies.
func RepliesToProto(rs []command.Reply) []*pb.Reply {
	out := make([]*pb.Reply, len(rs))
	for i, r := range rs {
		out[i] = &pb.Reply{Text: r.Text, Format: string(r.Format), Media: MediaToProto(r.Media), Buttons: ButtonsToProto(r.Buttons)}
	}
	return out
}

// RepliesFromProto converts command replies.
func RepliesFromProto(rs []*pb.Reply) []command.Reply {
	out := make([]command.Reply, len(rs))
	for i, r := range rs {
		out[i] = command.Reply{Text: r.GetText(), Format: channel.Format(r.GetFormat()), Media: MediaFromProto(r.GetMedia()), Buttons: ButtonsFromProto(r.GetButtons())}
	}
	return out
}

// HookToProto converts a hook request.
func HookToProto(r hook.Request) *pb.BeforeAgentStartRequest {
	return &pb.BeforeAgentStartRequest{Conversation: ConversationToProto(r.Conversation), Sender: SenderToProto(r.Sender), Message: r.Message, NewSession: r.NewSession, Workspace: r.Workspace, SessionId: r.SessionID,
		Attachments: attachmentsToProto(r.Attachments)}
}

// HookFromProto converts a hook request.
func HookFromProto(r *pb.BeforeAgentStartRequest) hook.Request {
	return hook.Request{Conversation: ConversationFromProto(r.GetConversation()), Sender: SenderFromProto(r.GetSender()), Message: r.GetMessage(), NewSession: r.GetNewSession(), Workspace: r.GetWorkspace(), SessionID: r.GetSessionId(),
		Attachments: attachmentsFromProto(r.GetAttachments())}
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

// attachmentsToProto converts saved attachments.
func attachmentsToProto(as []hook.Attachment) []*pb.Attachment {
	var out []*pb.Attachment
	for _, a := range as {
		out = append(out, &pb.Attachment{Kind: string(a.Kind), Path: a.Path, Mime: a.MIME, Filename: a.Filename, Size: a.Size})
	}
	return out
}

// attachmentsFromProto converts saved attachments.
func attachmentsFromProto(as []*pb.Attachment) []hook.Attachment {
	var out []hook.Attachment
	for _, a := range as {
		out = append(out, hook.Attachment{Kind: channel.MediaKind(a.GetKind()), Path: a.GetPath(), MIME: a.GetMime(), Filename: a.GetFilename(), Size: a.GetSize()})
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

// ReceivedToProto converts a message_received request.
func ReceivedToProto(r hook.ReceivedRequest) *pb.MessageReceivedRequest {
	return &pb.MessageReceivedRequest{CallId: r.CallID, Conversation: ConversationToProto(r.Conversation), Sender: SenderToProto(r.Sender), Text: r.Text,
		Attachments: attachmentsToProto(r.Attachments), MessageId: r.MessageID, TimestampMs: timeToMs(r.Timestamp)}
}

// ReceivedFromProto converts a message_received request.
func ReceivedFromProto(r *pb.MessageReceivedRequest) hook.ReceivedRequest {
	return hook.ReceivedRequest{CallID: r.GetCallId(), Conversation: ConversationFromProto(r.GetConversation()), Sender: SenderFromProto(r.GetSender()), Text: r.GetText(),
		Attachments: attachmentsFromProto(r.GetAttachments()), MessageID: r.GetMessageId(), Timestamp: msToTime(r.GetTimestampMs())}
}

// ReceivedResponseToProto converts a message_received decision.
func ReceivedResponseToProto(r hook.ReceivedResponse) *pb.MessageReceivedResponse {
	out := &pb.MessageReceivedResponse{Rewrite: r.Rewrite, Text: r.Text, Drop: r.Drop, DropReason: r.DropReason, Step: r.Step}
	for _, n := range r.Notes {
		out.Notes = append(out.Notes, &pb.Note{Attachment: n.Attachment, Label: n.Label, Text: n.Text, Replace: n.Replace})
	}
	return out
}

// ReceivedResponseFromProto converts a message_received decision.
func ReceivedResponseFromProto(r *pb.MessageReceivedResponse) hook.ReceivedResponse {
	out := hook.ReceivedResponse{Rewrite: r.GetRewrite(), Text: r.GetText(), Drop: r.GetDrop(), DropReason: r.GetDropReason(), Step: r.GetStep()}
	for _, n := range r.GetNotes() {
		out.Notes = append(out.Notes, hook.Note{Attachment: n.GetAttachment(), Label: n.GetLabel(), Text: n.GetText(), Replace: n.GetReplace()})
	}
	return out
}

// SendingToProto converts a message_sending request.
func SendingToProto(r hook.SendingRequest) *pb.MessageSendingRequest {
	return &pb.MessageSendingRequest{CallId: r.CallID, Conversation: ConversationToProto(r.Conversation), Text: r.Text, Format: string(r.Format), Agent: r.Agent, VoiceNoteFormat: r.VoiceNoteFormat}
}

// SendingFromProto converts a message_sending request.
func SendingFromProto(r *pb.MessageSendingRequest) hook.SendingRequest {
	return hook.SendingRequest{CallID: r.GetCallId(), Conversation: ConversationFromProto(r.GetConversation()), Text: r.GetText(), Format: channel.Format(r.GetFormat()), Agent: r.GetAgent(), VoiceNoteFormat: r.GetVoiceNoteFormat()}
}

// SendingResponseToProto converts a message_sending decision.
func SendingResponseToProto(r hook.SendingResponse) *pb.MessageSendingResponse {
	out := &pb.MessageSendingResponse{Rewrite: r.Rewrite, Text: r.Text, Suppress: r.Suppress, Step: r.Step}
	for _, m := range r.Media {
		out.Media = append(out.Media, &pb.MediaFile{Filename: m.Filename, Mime: m.MIME, Data: m.Data, Kind: string(m.Kind)})
	}
	return out
}

// SendingResponseFromProto converts a message_sending decision.
func SendingResponseFromProto(r *pb.MessageSendingResponse) hook.SendingResponse {
	out := hook.SendingResponse{Rewrite: r.GetRewrite(), Text: r.GetText(), Suppress: r.GetSuppress(), Step: r.GetStep()}
	for _, m := range r.GetMedia() {
		out.Media = append(out.Media, hook.MediaFile{Filename: m.GetFilename(), MIME: m.GetMime(), Data: m.GetData(), Kind: channel.MediaKind(m.GetKind())})
	}
	return out
}

// EndToProto converts an agent_end event.
func EndToProto(e hook.End) *pb.AgentEndRequest {
	out := &pb.AgentEndRequest{CallId: e.CallID, Conversation: ConversationToProto(e.Conversation), Sender: SenderToProto(e.Sender), Agent: e.Agent,
		Outcome: string(e.Outcome), ReplyText: e.ReplyText, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, CostUsd: e.CostUSD,
		DurationMs: e.Duration.Milliseconds(), SessionId: e.SessionID}
	for _, s := range e.ToolSteps {
		out.ToolSteps = append(out.ToolSteps, &pb.ToolStep{Name: s.Name, Summary: s.Summary})
	}
	return out
}

// EndFromProto converts an agent_end event.
func EndFromProto(r *pb.AgentEndRequest) hook.End {
	out := hook.End{CallID: r.GetCallId(), Conversation: ConversationFromProto(r.GetConversation()), Sender: SenderFromProto(r.GetSender()), Agent: r.GetAgent(),
		Outcome: hook.Outcome(r.GetOutcome()), ReplyText: r.GetReplyText(), InputTokens: r.GetInputTokens(), OutputTokens: r.GetOutputTokens(), CostUSD: r.GetCostUsd(),
		Duration: time.Duration(r.GetDurationMs()) * time.Millisecond, SessionID: r.GetSessionId()}
	for _, s := range r.GetToolSteps() {
		out.ToolSteps = append(out.ToolSteps, hook.ToolStep{Name: s.GetName(), Summary: s.GetSummary()})
	}
	return out
}
