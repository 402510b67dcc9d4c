package wire

import (
	"context"
	"encoding/json"
	"sync"

	"google.golang.org/protobuf/proto"

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
	return &pb.CallToolRequest{CallId: r.CallID, IdempotencyKey: r.IdempotencyKey, Tool: r.Tool, ArgumentsJson: string(r.Arguments), Conversation: ConversationToProto(r.Conversation),
		Sender: SenderToProto(r.Sender), Agent: r.Agent, Workspace: r.Workspace, Workdir: r.Workdir}
}

// ToolCallFromProto converts a tool call.
func ToolCallFromProto(r *pb.CallToolRequest) tool.CallRequest {
	return tool.CallRequest{CallID: r.GetCallId(), IdempotencyKey: r.GetIdempotencyKey(), Tool: r.GetTool(), Arguments: rawJSON(r.GetArgumentsJson()), Conversation: ConversationFromProto(r.GetConversation()),
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

// CallTool implements ToolService: a call whose idempotency key this
// process saw is answered with that call's answer (see onceCalls).
func (srv *Server) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	return srv.once.do(ctx, req.GetIdempotencyKey(), func() *pb.CallToolResponse {
		res, err := srv.Impl.Tool.Call(ctx, ToolCallFromProto(req))
		if err != nil {
			return &pb.CallToolResponse{Error: ErrorToProto(err)}
		}
		return ToolResultToProto(res)
	})
}

// maxOnceKeys and maxOnceBytes bound the finished calls a plugin process
// remembers (a result may be 256 KiB); the oldest is forgotten first. The
// host keeps its own durable record: this one covers a call it holds no
// result for, repeated while the plugin still runs (a result the host
// could not store, a call past the host's tool_timeout that went on to
// finish).
const (
	maxOnceKeys  = 1024
	maxOnceBytes = 8 << 20
)

// onceCalls makes "do it once" the default of a Go tool: the calls of one
// idempotency key run Provider.Call once per process; a repetition waits
// for the first to finish and gets its answer. A call that failed because
// its context ended (the host stopped it) is not remembered: the next one
// runs. The zero value is ready.
type onceCalls struct {
	mu    sync.Mutex
	calls map[string]*onceCall
	order []string // finished keys, oldest first
	bytes int      // the finished answers' sizes
}

type onceCall struct {
	done chan struct{}
	res  *pb.CallToolResponse
	size int
}

// do runs call once for key ("" : always) and returns its answer.
func (o *onceCalls) do(ctx context.Context, key string, call func() *pb.CallToolResponse) (*pb.CallToolResponse, error) {
	if key == "" {
		return call(), nil
	}
	o.mu.Lock()
	if c, ok := o.calls[key]; ok {
		o.mu.Unlock()
		select {
		case <-c.done:
			if c.res != nil {
				return c.res, nil
			}
			return o.do(ctx, key, call) // the first was stopped: run it now
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if o.calls == nil {
		o.calls = map[string]*onceCall{}
	}
	c := &onceCall{done: make(chan struct{})}
	o.calls[key] = c
	o.mu.Unlock()
	res := call()
	o.mu.Lock()
	if ctx.Err() != nil && res.GetError() != nil {
		delete(o.calls, key)
	} else {
		c.res, c.size = res, proto.Size(res)
		o.order = append(o.order, key)
		o.bytes += c.size
		for len(o.order) > maxOnceKeys || o.bytes > maxOnceBytes && len(o.order) > 1 {
			o.bytes -= o.calls[o.order[0]].size
			delete(o.calls, o.order[0])
			o.order = o.order[1:]
		}
	}
	o.mu.Unlock()
	close(c.done)
	return res, nil
}
