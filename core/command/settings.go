package command

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/session"
	"github.com/clawhost/clawhost/core/sessionkey"
	"github.com/clawhost/clawhost/core/store"
)

// The settings group: the chat's own model, effort, permission mode, queue
// mode, and whether tool progress is shown.
var (
	cmdVerbose = &builtin{name: "verbose", help: "show tool progress: /verbose on|off",
		run: func(h *Handler, c call) string { return h.verbose(c.ctx, c.key, c.args) }}
	cmdModel = &builtin{name: "model", help: "this chat's model: /model [name|default]", needs: control,
		run: func(h *Handler, c call) string { return h.model(c.ctx, c.key, strings.TrimSpace(c.args)) }}
	cmdEffort = &builtin{name: "effort", aliases: []string{"think", "thinking", "t"}, help: "how hard claude thinks: /effort low|medium|high|max|default (also /think)", needs: control,
		run: func(h *Handler, c call) string {
			return h.effort(c.ctx, c.key, strings.ToLower(strings.TrimSpace(c.args)))
		}}
	cmdMode = &builtin{name: "mode", help: "claude's permission mode here: /mode [name|default] (changing it: owners)", needs: control,
		run: func(h *Handler, c call) string {
			arg := strings.TrimSpace(c.args)
			if arg != "" && !c.who.Owner {
				return noticeModeOwners
			}
			return h.mode(c.ctx, c.key, arg, c.who.Owner)
		}}
	cmdQueue = &builtin{name: "queue", help: "what a message does while a reply runs: /queue followup|collect|interrupt|steer|default", needs: control,
		run: func(h *Handler, c call) string {
			return h.queueMode(c.ctx, c.key, c.m.Instance, strings.ToLower(strings.TrimSpace(c.args)))
		}}
)

// Policy is the operator's: a chat's permission mode decides what claude
// may do without asking (and "ask" who approves a tool use), so changing
// it — /mode NAME, /mode default, the picker's buttons — is for owners
// only, and only to a mode agent.permission_modes lists. A sender with
// Role.Control sees the mode (bare /mode). /model stays within agent.models
// and /effort within claude's levels for anyone with Role.Control: neither
// widens what claude may do.
const noticeModeOwners = "Only an owner can change the permission mode."

func (h *Handler) verbose(ctx context.Context, key sessionkey.Key, args string) string {
	s, err := h.Store.UpdateSession(ctx, key.String(), func(s *store.Session, found bool) error {
		switch strings.ToLower(strings.TrimSpace(args)) {
		case "on", "true", "1", "yes":
			s.Verbose = true
		case "off", "false", "0", "no":
			s.Verbose = false
		default:
			s.Verbose = !s.Verbose
		}
		return nil
	})
	switch {
	case err != nil:
		return "Could not change the setting."
	case s.Verbose:
		return "Tool progress will be shown."
	}
	return "Tool progress will not be shown."
}

// modelName is what /model accepts as a model when agent.models is not
// set: an alias or a model id.
// (A function rather than the regular expression
// ^[A-Za-z0-9][A-Za-z0-9._:@\[\]-]{0,99}$, whose hundredfold repetition
// took a millisecond to compile at every start.)
func modelName(s string) bool {
	if len(s) == 0 || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || !strings.ContainsRune("._:@[]-", rune(c))) {
			return false
		}
	}
	return true
}

// model answers /model: bare, the session's model and the ones offered;
// "default" clears the override; a name sets it.
func (h *Handler) model(ctx context.Context, key sessionkey.Key, arg string) string {
	var offered []string
	if h.Models != nil {
		offered = h.Models(key)
	}
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	cur := o.Model
	if cur == "default" {
		cur = "" // cleared: see below
	}
	def := ""
	if h.Model != nil {
		def = h.Model(key)
	}
	switch {
	case arg == "":
		var b strings.Builder
		switch {
		case cur != "":
			fmt.Fprintf(&b, "Model: %s (set with /model; /model default goes back to %s).", cur, cmp.Or(def, "claude's default"))
		default:
			fmt.Fprintf(&b, "Model: %s.", cmp.Or(def, "claude's default"))
		}
		if len(offered) > 0 {
			fmt.Fprintf(&b, "\nAvailable: %s. Change with /model NAME.", strings.Join(offered, ", "))
		} else {
			b.WriteString("\nChange with /model NAME (a model name or alias, e.g. opus or sonnet).")
		}
		return b.String()
	case strings.EqualFold(arg, "default"):
		// claude resumes a session on the model it last used unless told
		// otherwise, so going back from an override is "--model default"
		// (or the configured model), not the absence of --model.
		arg = ""
		if cur != "" && def == "" {
			arg = "default"
		}
	case len(offered) > 0 && !slices.Contains(offered, arg):
		return fmt.Sprintf("%q is not offered here. Available: %s.", arg, strings.Join(offered, ", "))
	case !modelName(arg):
		return fmt.Sprintf("%q is not a model name.", arg)
	}
	if err := h.Sessions.SetOverride(ctx, key, session.SettingModel, arg); err != nil {
		return "The model could not be changed; try again."
	}
	if arg == "" || arg == "default" {
		return fmt.Sprintf("Model: back to %s. The conversation goes on.", cmp.Or(def, "claude's default"))
	}
	return fmt.Sprintf("Model: %s from the next message on. The conversation goes on.", arg)
}

// effort answers /effort: bare, the session's level; "default" clears it; a
// level sets it.
func (h *Handler) effort(ctx context.Context, key sessionkey.Key, arg string) string {
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	cur := string(o.Effort)
	switch e, err := session.ParseEffort(arg); {
	case arg == "":
		return fmt.Sprintf("Effort: %s. Change with /effort %s or default.", cmp.Or(cur, "claude's default"), session.Join(session.Efforts, "|"))
	case arg == "default":
		arg = ""
	case err != nil:
		return fmt.Sprintf("Effort is one of %s, or default.", session.Join(session.Efforts, ", "))
	default:
		arg = string(e) // an alias (/think xhigh) stored and said as claude's level
	}
	if err := h.Sessions.SetOverride(ctx, key, session.SettingEffort, arg); err != nil {
		return "The effort could not be changed; try again."
	}
	return fmt.Sprintf("Effort: %s from the next message on.", cmp.Or(arg, "claude's default"))
}

// mode answers /mode: bare, the session's permission mode and the ones
// agent.permission_modes offers; "default" clears it; a name sets it (only
// one the configuration offers). Only an owner changes it (answer refuses
// the others first); owner says whether to tell how.
func (h *Handler) mode(ctx context.Context, key sessionkey.Key, arg string, owner bool) string {
	var offered []string
	if h.Modes != nil {
		offered = h.Modes(key)
	}
	def := ""
	if h.Mode != nil {
		def = h.Mode(key)
	}
	def = cmp.Or(def, "default")
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	cur := o.Mode
	switch {
	case arg == "":
		if len(offered) == 0 {
			return fmt.Sprintf("Permission mode: %s. The configuration offers no other (agent.permission_modes).", def)
		}
		if !owner {
			return fmt.Sprintf("Permission mode: %s. Available: %s. An owner can change it.", cmp.Or(cur, def), strings.Join(offered, ", "))
		}
		return fmt.Sprintf("Permission mode: %s. Available: %s. Change with /mode NAME.", cmp.Or(cur, def), strings.Join(offered, ", "))
	case strings.EqualFold(arg, "default"):
		arg = ""
	case !slices.Contains(offered, arg):
		if len(offered) == 0 {
			return "The configuration offers no other permission mode (agent.permission_modes)."
		}
		return fmt.Sprintf("%q is not offered here. Available: %s.", arg, strings.Join(offered, ", "))
	}
	if err := h.Sessions.SetOverride(ctx, key, session.SettingMode, arg); err != nil {
		return "The permission mode could not be changed; try again."
	}
	if arg == "ask" {
		return "Permission mode: ask from the next message on: before claude uses a tool that needs permission, the approvers are asked (Allow, Deny or Always). The conversation goes on."
	}
	return fmt.Sprintf("Permission mode: %s from the next message on. The conversation goes on.", cmp.Or(arg, def))
}

// queueMode answers /queue: bare, this chat's mode; "default" clears it; a
// mode sets it from the next message on.
func (h *Handler) queueMode(ctx context.Context, key sessionkey.Key, instance, arg string) string {
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return "The session could not be read; try again."
	}
	def := string(session.QueueFollowup)
	if h.QueueMode != nil {
		def = cmp.Or(h.QueueMode(instance), def)
	}
	switch q, err := session.ParseQueueMode(arg); {
	case arg == "":
		return fmt.Sprintf("Queue: %s. Change with /queue %s or default.", cmp.Or(string(o.Queue), def), session.Join(session.QueueModes, "|"))
	case arg == "default":
		arg = ""
	case err != nil:
		return fmt.Sprintf("Queue mode is one of %s, or default.", session.Join(session.QueueModes, ", "))
	default:
		arg = string(q) // an alias (steer-backlog) stored and said as the mode it is
	}
	if err := h.Sessions.SetOverride(ctx, key, session.SettingQueue, arg); err != nil {
		return "The queue mode could not be changed; try again."
	}
	return fmt.Sprintf("Queue: %s from the next message on.", cmp.Or(arg, def))
}

// ApplyDirective applies the directive a message starts with
// (session.SplitDirective: "/model opus explain this") for who, as the
// command alone would — the same roles, checks and answers — and reports
// whether the setting now holds. The caller runs the rest of the message
// either way; answer, when the setting does not hold, says why.
func (h *Handler) ApplyDirective(ctx context.Context, key sessionkey.Key, m *message.Message, name, arg string, who Role) (answer string, held bool) {
	inv, ok := h.Registry.Parse("/" + name + " " + arg)
	if !ok || !inv.Builtin() {
		return "", false
	}
	answer = h.answer(ctx, key, m, inv, who)
	setting := session.Directives[name]
	if setting == session.SettingVerbose {
		s, err := h.Store.Session(ctx, key.String())
		return answer, err == nil && s.Verbose == strings.EqualFold(arg, "on")
	}
	o, err := h.Sessions.Overrides(ctx, key)
	if err != nil {
		return answer, false
	}
	want := session.Overrides{}
	if !strings.EqualFold(arg, "default") && want.Set(setting, arg) != nil {
		return answer, false
	}
	switch setting {
	case session.SettingModel:
		return answer, strings.EqualFold(arg, "default") || o.Model == want.Model
	case session.SettingEffort:
		return answer, o.Effort == want.Effort
	case session.SettingMode:
		return answer, o.Mode == want.Mode
	case session.SettingQueue:
		return answer, o.Queue == want.Queue
	}
	return answer, false
}
