package agenttools

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/sdk/channel"
)

// Late-bound agent tools (issue 84). A claude started before any chat asked for it
// (the agent's spare, core/runner) cannot carry a chat's token: its MCP config gives
// the bridge a token made for that one process — 32 random bytes, no chat — and the
// endpoint keeps a table token → binding. A process's token lists its agent's plugin
// tools (the bridge does that when it starts; listing acts for nobody) and nothing
// else until the chat that adopts the process binds it (BindProcess, before the
// runner writes that chat's first prompt); from then on every call with it acts in
// that chat, and a call naming another is refused. The binding is made once, and
// DropProcess (the process ended) forgets the token and removes the file. Processes
// started for a known chat keep the per-chat token (Tools): nothing to bind, and a
// process of the chat restarted after a host restart needs no table.

// procPrefix starts the MCP config file of one process (agentMCPPrefix: an earlier
// run's are removed at Start).
const procPrefix = agentMCPPrefix + "p-"

// procTools is one process's token and, once adopted, the chat it acts in.
type procTools struct {
	key          [32]byte // its token's (tokenKey)
	agent, path  string
	bound        bool
	chat, thread string
	group        bool
}

// caller is who a tool call acts for: the chat, thread and agent its token was made
// or bound for.
type caller struct {
	chat, thread, agent string
	group               bool
}

// errNoProcess: the handle names no live process (dropped, or never made).
var errNoProcess = errors.New("agent tools: no such process (it ended)")

// tokenKey is what the table keeps of a token: its hash (a lookup's time says nothing
// of the token).
func tokenKey(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// ProcessTools makes the MCP config file of one claude process of agent, bound to no
// chat (the runner's spare): a 0600 file in the endpoint's directory whose env map
// gives the bridge a token made for that process only, and the handle BindProcess
// and DropProcess name it by. Until BindProcess, every call with the token but the
// tool list is refused.
func (a *Endpoint) ProcessTools(agent string) (path, handle string, err error) {
	if a.dir == "" {
		return "", "", errors.New("agent tools: the endpoint is not started")
	}
	var tok, id [32]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return "", "", err
	}
	if _, err := rand.Read(id[:8]); err != nil {
		return "", "", err
	}
	token, handle := hex.EncodeToString(tok[:]), hex.EncodeToString(id[:8])
	path = filepath.Join(a.dir, procPrefix+handle+".json")
	env := map[string]string{EnvAgentSocket: a.sock, EnvAgentToken: token}
	if agent != "" {
		env[EnvAgentID] = agent
	}
	if err := a.writeMCPConfig(path, env); err != nil {
		return "", "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.procs == nil {
		a.procs, a.procTokens = map[string]*procTools{}, map[[32]byte]string{}
	}
	a.procs[handle] = &procTools{key: tokenKey(token), agent: agent, path: path}
	a.procTokens[tokenKey(token)] = handle
	return path, handle, nil
}

// BindProcess binds the process of handle to m's chat (and thread) for key's agent:
// the chat that adopted it. It fails for an ended process, one bound already, or one
// made for another agent.
func (a *Endpoint) BindProcess(handle string, key sessionkey.Key, m *message.Message) error {
	if m == nil || m.Instance == "" || m.ChatID == "" {
		return errors.New("agent tools: no chat to bind the process to")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	pt := a.procs[handle]
	switch {
	case pt == nil:
		return errNoProcess
	case pt.bound:
		return errors.New("agent tools: the process is bound to a chat already")
	case pt.agent != key.Agent:
		return errors.New("agent tools: the process was started for another agent")
	}
	pt.bound, pt.chat, pt.thread = true, m.Instance+":"+m.ChatID, m.ThreadID
	pt.group = m.ChatType == channel.ChatGroup || m.ChatType == channel.ChatChannel
	if !pt.group && m.From != "" {
		// The sender an entry scheduled there is dropped with (as Tools notes it).
		if a.senders == nil {
			a.senders = map[string]string{}
		}
		a.senders[pt.chat] = m.From
	}
	return nil
}

// DropProcess forgets the process of handle (it ended, or never started): its token
// is refused from then on, and its file removed.
func (a *Endpoint) DropProcess(handle string) {
	a.mu.Lock()
	pt := a.procs[handle]
	delete(a.procs, handle)
	if pt != nil {
		delete(a.procTokens, pt.key)
	}
	a.mu.Unlock()
	if pt != nil {
		_ = os.Remove(pt.path)
	}
}

// callerOf authenticates a call: a process's token acts for the chat it is bound to
// (unbound, for nobody: only list is allowed, for its agent), and the chat, thread and
// agent the call names, when it names any, must be that binding's; any other token
// must be the one made for the chat, thread and agent the call names.
func (a *Endpoint) callerOf(token, chat, thread string, group bool, agent string, list bool) (caller, bool) {
	a.mu.Lock()
	h, isProc := a.procTokens[tokenKey(token)]
	var pt procTools
	if isProc {
		pt = *a.procs[h]
	}
	a.mu.Unlock()
	if !isProc {
		ok := hmac.Equal([]byte(token), []byte(a.token(chat, thread, group, agent)))
		return caller{chat: chat, thread: thread, agent: agent, group: group}, ok
	}
	switch {
	case agent != "" && agent != pt.agent:
		return caller{}, false
	case !pt.bound:
		return caller{agent: pt.agent}, list && chat == "" && thread == "" && !group
	case (chat != "" || thread != "" || group) && (chat != pt.chat || thread != pt.thread || group != pt.group):
		return caller{}, false
	}
	return caller{chat: pt.chat, thread: pt.thread, agent: pt.agent, group: pt.group}, true
}
