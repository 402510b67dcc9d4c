package command

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// A builtin is one command the core answers itself: its name and help
// (Spec), who may use it, and its handler. Each lives in the file of its
// group (session.go, settings.go, agent.go, access.go, info.go, schedule.go); to add
// one, define it there and list it in builtins.
type builtin struct {
	name, help string
	// aliases are other names of the command (OpenClaw's /think for
	// /effort).
	aliases []string
	// needs is the role the sender must have; the handler is not called
	// otherwise.
	needs need
	run   func(h *Handler, c call) string
}

// need is the role a built-in asks of its sender.
type need int

const (
	// anyone may use the command.
	anyone need = iota
	// control: the sender must control the session (Role.Control).
	control
	// owner: the sender must be an owner (Role.Owner).
	owner
	// ownersChat: the sender must be an owner, in a chat nobody but
	// owners reach (Role.NotOwnersChat).
	ownersChat
)

// call is one invocation of a built-in.
type call struct {
	ctx  context.Context
	key  sessionkey.Key // the session
	m    *message.Message
	name string // the command as typed (its name or an alias)
	args string // trimmed
	who  Role
}

// builtins are the built-in commands, in /help order.
var builtins = []*builtin{
	cmdNew, cmdReset, cmdStatus, cmdHelp, cmdCommands, cmdStop, cmdResume, cmdWhoami, cmdApprove, cmdDeny, cmdRevoke,
	cmdVerbose, cmdModel, cmdEffort, cmdMode, cmdQueue, cmdAgent, cmdWorktree, cmdCompact, cmdPlan, cmdList, cmdSwitch, cmdName, cmdContinue, cmdDesktop, cmdDetach, cmdSchedule, cmdUsage, cmdExport,
}

// Builtins are the specs of the built-in commands, in /help order.
var Builtins = specs(builtins)

// builtinByName indexes builtins.
var builtinByName = func() map[string]*builtin {
	m := make(map[string]*builtin, len(builtins))
	for _, b := range builtins {
		m[b.name] = b
	}
	return m
}()

func specs(list []*builtin) []Spec {
	out := make([]Spec, len(list))
	for i, b := range list {
		out[i] = Spec{Name: b.name, Help: b.help, OwnerOnly: b.needs == owner || b.needs == ownersChat, Aliases: b.aliases}
	}
	return out
}

// answer runs a built-in, or refuses an owner-only plugin command to a
// sender who is not an owner.
func (h *Handler) answer(ctx context.Context, key sessionkey.Key, m *message.Message, inv Invocation, who Role) string {
	switch {
	case inv.OwnerOnly && !who.Owner && inv.Builtin():
		h.auditCommand(ctx, m, inv, "refused", "owners only")
		return "Only an owner can use /" + inv.Name + "."
	case inv.OwnerOnly && !who.Owner:
		h.auditCommand(ctx, m, inv, "refused", "owners only")
		return fmt.Sprintf("The /%s command is for owners only.", inv.Name)
	}
	b := builtinByName[inv.Name]
	if b == nil || !inv.Builtin() {
		return ""
	}
	if b.needs == control && !who.Control {
		h.auditCommand(ctx, m, inv, "refused", "only who controls the session")
		return "In this group only an owner can use /" + inv.Name + "."
	}
	if b.needs == ownersChat && who.NotOwnersChat != nil {
		h.auditCommand(ctx, m, inv, "refused", who.NotOwnersChat.Error())
		return "Not in this chat: " + who.NotOwnersChat.Error() + "."
	}
	if b.needs != anyone {
		h.auditCommand(ctx, m, inv, "allowed", "")
	}
	return b.run(h, call{ctx: ctx, key: key, m: m, name: inv.Name, args: inv.Args, who: who})
}

// auditCommand records a role-gated command in the audit trail: who used
// it (or was refused it) where, with its arguments (a pairing code in
// them is left out: it is a credential until used).
func (h *Handler) auditCommand(ctx context.Context, m *message.Message, inv Invocation, decision, why string) {
	args := inv.Args
	if inv.Name == "approve" {
		args = ""
	}
	detail := strings.TrimSpace("/" + inv.Name + " " + args)
	if why != "" {
		detail += " (" + why + ")"
	}
	h.audit(ctx, store.AuditEvent{Kind: store.AuditCommand, Actor: m.From, Instance: m.Instance, ChatID: m.ChatID, Subject: "/" + inv.Name, Decision: decision, Detail: detail})
}

// audit appends to the audit trail, logging a failure.
func (h *Handler) audit(ctx context.Context, e store.AuditEvent) {
	if err := h.Store.Audit(ctx, e); err != nil && ctx.Err() == nil {
		h.Logger.Error("audit trail write failed", "kind", e.Kind, "error", err)
	}
}
