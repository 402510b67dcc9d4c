package wire

import (
	"context"
	"encoding/json"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/tool"
)

// ToolSpecsToProto converts a tool plugin's tools.
func ToolSpecsToProto(ss []tool.Spec) []*pb.ToolSpec {
	out := make([]*pb.ToolSpec, len(ss))
	for i, s := range ss {
		out[i] = &pb.ToolSpec{Name: s.Name, Description: s.Description, InputSchemaJson: string(s.InputSchema)}
	}
	return out
}

// ToolSpecsFromProto converts a tool plugin's tools.
func ToolSpecsFromProto(ss []*pb.ToolSpec) []tool.Spec {
	out := make([]tool.Spec, len(ss))
	for i, s := range ss {
		out[i] = tool.Spec{Name: s.GetName(), Description: s.GetDescription(), InputSchema: rawJSON(s.GetInputSchemaJson())}
	}
	return out
}

// ToolCallToProto converts a tool call.
func ToolCallToProto(r tool.CallRequest) *pb.CallToolRequest {
	return &pb.CallToolRequest{CallId: r.CallID, Tool: r.Tool, ArgumentsJson: string(r.Arguments), Conversation: ConversationToProto(r.Conversation),
		Sender: SenderToProto(r.Sender), Agent: r.Agent, Workspace: r.Workspace, Workdir: r.Workdir}
}

// ToolCallFromProto converts a tool call.
func ToolCallFromProto(r *pb.CallToolRequest) tool.CallRequest {
	return tool.CallRequest{CallID: r.GetCallId(), Tool: r.GetTool(), Arguments: rawJSON(r.GetArgumentsJson()), Conversation: ConversationFromProto(r.GetConversation()),
		Sender: SenderFromProto(r.GetSender()), Agent: r.GetAgent(), Workspace: r.GetWorkspace(), Workdir: r.GetWorkdir()}
}

// ToolResultToProto converts a tool call's result.
func ToolResultToProto(r tool.Result) *pb.CallToolResponse {
	out := &pb.CallToolResponse{Text: r.Text, IsError: r.IsError}
	for _, f := range r.Files {
		out.Files = append(out.Files, &pb.ToolFile{Path: f.Path, Caption: f.Caption})
	}
	return out
}

// ToolResultFromProto converts a tool call's result.
func ToolResultFromProto(r *pb.CallToolResponse) tool.Result {
	out := tool.Result{Text: r.GetText(), IsError: r.GetIsError()}
	for _, f := range r.GetFiles() {
		out.Files = append(out.Files, tool.File{Path: f.GetPath(), Caption: f.GetCaption()})
	}
	return out
}

// rawJSON is s as JSON, nil for "".
func rawJSON(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// ListTools implements ToolService.
func (srv *Server) ListTools(ctx context.Context, _ *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	specs, err := srv.Impl.Tool.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.ListToolsResponse{Tools: ToolSpecsToProto(specs)}, nil
}

// CallTool implements ToolService.
func (srv *Server) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	res, err := srv.Impl.Tool.Call(ctx, ToolCallFromProto(req))
	if err != nil {
		return &pb.CallToolResponse{Error: ErrorToProto(err)}, nil
	}
	return ToolResultToProto(res), nil
}
