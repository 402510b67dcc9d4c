package command

import (
	"context"
	"fmt"

	"github.com/clawhost/clawhost/core/message"
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
)

// call is one invocation of a built-in.
type call struct {
	ctx  context.Context
	key  string // the session
	m    *message.Message
	name string // the command as typed (its name or an alias)
	args string // trimmed
	who  Role
}

// builtins are the built-in commands, in /help order.
var builtins = []*builtin{
	cmdNew, cmdReset, cmdStatus, cmdHelp, cmdCommands, cmdStop, cmdResume, cmdWhoami, cmdApprove, cmdRevoke,
	cmdVerbose, cmdModel, cmdEffort, cmdMode, cmdQueue, cmdAgent, cmdWorktree, cmdCompact, cmdList, cmdSwitch, cmdSchedule,
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
		out[i] = Spec{Name: b.name, Help: b.help, OwnerOnly: b.needs == owner, Aliases: b.aliases}
	}
	return out
}

// answer runs a built-in, or refuses an owner-only plugin command to a
// sender who is not an owner.
func (h *Handler) answer(ctx context.Context, key string, m *message.Message, inv Invocation, who Role) string {
	switch {
	case inv.OwnerOnly && !who.Owner && inv.Builtin():
		return "Only an owner can use /" + inv.Name + "."
	case inv.OwnerOnly && !who.Owner:
		return fmt.Sprintf("The /%s command is for owners only.", inv.Name)
	}
	b := builtinByName[inv.Name]
	if b == nil || !inv.Builtin() {
		return ""
	}
	if b.needs == control && !who.Control {
		return "In this group only an owner can use /" + inv.Name + "."
	}
	return b.run(h, call{ctx: ctx, key: key, m: m, name: inv.Name, args: inv.Args, who: who})
}
