package runner

import (
	"encoding/json"
	"sync"
	"time"
)

// PermissionRequest is claude asking whether it may use a tool
// (TurnRequest.AskPermission): a can_use_tool control request, as the
// Claude Agent SDK receives it with --permission-prompt-tool stdio.
// Observed with claude 2.1.330 against the fake API (TestRealPermission*):
//
//	{"type":"control_request","request_id":"<uuid>","request":{"subtype":"can_use_tool",
//	 "tool_name":"Bash","display_name":"Bash","input":{"command":"touch /tmp/x","description":"…"},
//	 "description":"…","permission_suggestions":[…],"blocked_path":"/tmp/x","tool_use_id":"toolu_…"}}
//
// answered on stdin with
//
//	{"type":"control_response","response":{"subtype":"success","request_id":"<uuid>",
//	 "response":{"behavior":"allow","updatedInput":{…}}}}    (or "deny" with "message")
//
// and for "always" with the rules to add for the session:
//
//	"updatedPermissions":[{"type":"addRules","behavior":"allow","destination":"session",
//	  "rules":[{"toolName":"Bash","ruleContent":"git log:*"}]}]
//
// The turn waits for the answer; its timeout does not count the wait.
type PermissionRequest struct {
	// ID is claude's request id.
	ID string
	// Tool is the tool's name ("Bash", "Write", "mcp__server__tool").
	Tool string
	// Input is the tool's input as claude would run it (untrusted: the
	// model wrote it).
	Input json.RawMessage
	// ToolUseID ties the request to the EventToolUse of the same call.
	ToolUseID string
	// Description is claude's one-line description of the call, if any.
	Description string
	// BlockedPath is the path that made claude ask, if any.
	BlockedPath string
	// Reason is claude's reason for asking (decision_reason), if any.
	Reason string
	// NoAlways: claude asks that no "always allow" be offered for this
	// call (suppress_always_allow_rule).
	NoAlways bool
	// Suggestions are claude's permission_suggestions: the permission
	// updates it would offer for "always" (AlwaysRules reads them).
	Suggestions []json.RawMessage
	// Withdrawn is closed when the question no longer needs an answer:
	// claude withdrew it (control_cancel_request) or the turn ended.
	Withdrawn <-chan struct{}

	answers chan<- permissionAnswer
	once    sync.Once
}

// AskUserQuestion is claude's tool for a multiple-choice question to the
// user. With the host answering permission prompts, claude 2.1.330 routes
// it to the host as a can_use_tool request (it is not offered to the model
// otherwise); the answers go back as the allowed input with "answers" set
// (question text → chosen label), which claude hands the model as the
// tool's result (TestRealAskUserQuestion).
const AskUserQuestion = "AskUserQuestion"

// ExitPlanMode is claude's tool for leaving plan mode: it asks to go on
// with its plan. claude 2.1.330 keeps the plan in a file of its own
// (<config dir>/plans/<slug>.md, which the plan mode's system prompt
// names) and asks with input {"plan": <the file's text>, "planFilePath":
// <path>} — {} when no plan file was written (TestRealPlanMode). Allowed,
// the tool's result is "User has approved exiting plan mode. You can now
// proceed." and the turn goes on in the mode the process had before plan
// mode (default); denied, the message is the tool's error and claude stays
// in plan mode.
const ExitPlanMode = "ExitPlanMode"

// PlanMode is the --permission-mode of a turn that plans first.
const PlanMode = "plan"

// Decision answers a PermissionRequest.
type Decision struct {
	Allow bool
	// Always (with Allow) are rules also allowed for the rest of the
	// process's session, without asking again: the request's AlwaysRules,
	// sent to claude as session rules (updatedPermissions).
	Always []Rule
	// Message tells claude why it was denied.
	Message string
	// UpdatedInput (with Allow) replaces the tool's input: the answers
	// of AskUserQuestion go back to claude this way.
	UpdatedInput json.RawMessage
}

// Answer answers the request; only the first call counts, and an answer
// after the question was withdrawn is dropped.
func (p *PermissionRequest) Answer(d Decision) {
	p.once.Do(func() {
		select {
		case p.answers <- permissionAnswer{id: p.ID, d: d}:
		case <-p.Withdrawn:
		}
	})
}

// NewPermissionRequest returns a question about tool with input that is
// answered into decided (buffered: the first answer; the question is never
// withdrawn). Like FinishedTurn, it is for agents that do not drive the
// claude CLI and for tests of what consumes a Turn's EventPermission.
func NewPermissionRequest(id, tool string, input json.RawMessage, suggestions ...json.RawMessage) (req *PermissionRequest, decided <-chan Decision) {
	answers := make(chan permissionAnswer, 1)
	out := make(chan Decision, 1)
	req = &PermissionRequest{ID: id, Tool: tool, Input: input, Suggestions: suggestions, Withdrawn: make(chan struct{}), answers: answers}
	go func() { out <- (<-answers).d }()
	return req, out
}

type permissionAnswer struct {
	id string
	d  Decision
}

// wireControlRequest is a control_request line from claude.
type wireControlRequest struct {
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype     string            `json:"subtype"`
		ToolName    string            `json:"tool_name"`
		Input       json.RawMessage   `json:"input"`
		ToolUseID   string            `json:"tool_use_id"`
		Description string            `json:"description"`
		BlockedPath string            `json:"blocked_path"`
		Reason      string            `json:"decision_reason"`
		NoAlways    bool              `json:"suppress_always_allow_rule"`
		Suggestions []json.RawMessage `json:"permission_suggestions"`
		// RequestID of a control_cancel_request's request.
		RequestID string `json:"request_id"`
	} `json:"request"`
}

// asking is the exchange's side of the permission questions of one turn:
// the ones waiting for an answer, and the paused timeout.
type asking struct {
	answers chan permissionAnswer
	open    map[string]*PermissionRequest
	cancel  map[string]chan struct{}
	tool    map[string]json.RawMessage // input of each open request, for the allow answer
	since   time.Time                  // when the first open question was asked
}

func newAsking() *asking {
	return &asking{answers: make(chan permissionAnswer), open: map[string]*PermissionRequest{}, cancel: map[string]chan struct{}{}, tool: map[string]json.RawMessage{}}
}

// waiting reports whether a question is open (the timeout is paused).
func (a *asking) waiting() bool { return len(a.open) > 0 }

// controlRequest handles a control_request line: a permission question
// becomes an EventPermission; anything else is refused at once, so claude
// never waits on a request this host does not serve.
func (x *reading) controlRequest(p *proc, raw []byte, at time.Time) {
	var cr wireControlRequest
	if err := json.Unmarshal(raw, &cr); err != nil || cr.RequestID == "" {
		return
	}
	if cr.Request.Subtype != "can_use_tool" || !p.ask {
		writeControl(p, map[string]any{"subtype": "error", "request_id": cr.RequestID, "error": "not supported by this host: " + cr.Request.Subtype})
		return
	}
	a := x.asking
	if _, dup := a.open[cr.RequestID]; dup {
		return
	}
	w := make(chan struct{})
	req := &PermissionRequest{ID: cr.RequestID, Tool: cr.Request.ToolName, Input: cr.Request.Input, ToolUseID: cr.Request.ToolUseID,
		Description: cr.Request.Description, BlockedPath: cr.Request.BlockedPath, Reason: cr.Request.Reason, NoAlways: cr.Request.NoAlways,
		Suggestions: cr.Request.Suggestions, Withdrawn: w, answers: a.answers}
	if len(a.open) == 0 {
		a.since = at
	}
	a.open[cr.RequestID], a.cancel[cr.RequestID], a.tool[cr.RequestID] = req, w, cr.Request.Input
	x.t.emit(Event{Kind: EventPermission, Permission: req, At: at})
}

// controlCancel handles claude's control_cancel_request: the question is
// withdrawn (the answer, if one comes, is dropped).
func (x *reading) controlCancel(raw []byte, now time.Time) (resumed time.Duration) {
	var cr wireControlRequest
	if json.Unmarshal(raw, &cr) != nil {
		return 0
	}
	id := cr.RequestID
	if id == "" {
		id = cr.Request.RequestID
	}
	return x.asking.close(id, now)
}

// close forgets question id; when it was the last open one, it returns how
// long the questions kept the turn waiting (the timeout is moved by that).
func (a *asking) close(id string, now time.Time) time.Duration {
	if _, ok := a.open[id]; !ok {
		return 0
	}
	close(a.cancel[id])
	delete(a.open, id)
	delete(a.cancel, id)
	delete(a.tool, id)
	if len(a.open) == 0 {
		return now.Sub(a.since)
	}
	return 0
}

// withdrawAll withdraws every open question (the turn ended).
func (a *asking) withdrawAll() {
	for id := range a.open {
		a.close(id, time.Time{})
	}
}

// answer writes the control response for an answered question.
func (x *reading) answer(p *proc, ans permissionAnswer, now time.Time) time.Duration {
	input, ok := x.asking.tool[ans.id]
	if !ok {
		return 0
	}
	var resp map[string]any
	if ans.d.Allow && x.asking.open[ans.id] != nil && x.asking.open[ans.id].Tool == ExitPlanMode {
		// claude leaves plan mode: this process no longer runs in the
		// mode it was started with.
		p.planExited.Store(true)
	}
	switch {
	case ans.d.Allow:
		resp = map[string]any{"behavior": "allow", "updatedInput": input}
		if ans.d.UpdatedInput != nil {
			resp["updatedInput"] = ans.d.UpdatedInput
		}
		if len(ans.d.Always) > 0 {
			// Session rules only: claude's suggestions may name a settings
			// file as their destination, which would outlive the session.
			var rules []any
			for _, r := range ans.d.Always {
				rule := map[string]any{"toolName": r.Tool}
				if r.Content != "" {
					rule["ruleContent"] = r.Content
				}
				rules = append(rules, rule)
			}
			resp["updatedPermissions"] = []any{map[string]any{"type": "addRules", "behavior": "allow", "destination": "session", "rules": rules}}
		}
	default:
		msg := ans.d.Message
		if msg == "" {
			msg = "The user denied this tool use."
		}
		resp = map[string]any{"behavior": "deny", "message": msg}
	}
	writeControl(p, map[string]any{"subtype": "success", "request_id": ans.id, "response": resp})
	return x.asking.close(ans.id, now)
}

// writeControl writes a control_response in the background (a blocked
// stdin never blocks the exchange).
func writeControl(p *proc, response map[string]any) {
	b, _ := json.Marshal(map[string]any{"type": "control_response", "response": response})
	go func() { _ = p.write(append(b, '\n')) }()
}
