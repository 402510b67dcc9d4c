package wire

import (
	"time"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/hook"
)

// The conversions of the command and hook plugins' messages.

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
