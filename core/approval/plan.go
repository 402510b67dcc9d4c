package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

// A plan (claude's ExitPlanMode, runner.ExitPlanMode) is asked like a tool
// use — the same approvers, routes, card and timeout — but reads as what
// it is: the plan itself, in the channel's markup, with Approve and Keep
// planning. It is never offered (nor typed, nor stored) as an "always":
// each plan is approved on its own. Keep planning denies the tool with a
// message telling claude to wait for feedback; the turn (core/turn) then
// takes the next message of the person who pressed it as that feedback.
// A message of their own words written in the turn's chat while the plan
// waits does both: the plan goes back, and the message is the feedback.
// A plan too long for one message of the channel goes as the file plan.md
// with the question under it; where no file can be sent, the whole plan
// goes in the text, over several messages.

// planFile is the name of the file a long plan is sent as.
const planFile = "plan.md"

// keepVerb is the button and verb of Keep planning.
const keepVerb = "k"

// renderPlan is ExitPlanMode's input made readable: its plan ("" when
// claude sent none: it wrote no plan file).
func renderPlan(raw json.RawMessage) rendering {
	var in struct {
		Plan string `json:"plan"`
	}
	_ = json.Unmarshal(raw, &in)
	plan := strings.TrimSpace(planVisible(in.Plan))
	return rendering{text: plan, file: []byte(plan + "\n"), name: planFile, what: "plan"}
}

// planVisible is a plan with control and invisible characters written as
// escapes; spaces and line breaks stay (markdown needs them).
func planVisible(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r != '\n' && r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// renderPlanQuestion is the text (markdown) and buttons of a plan
// question; whole: the text carries the plan (else it went as planFile).
func (qu *question) renderPlanQuestion(cfg Config, buttons, whole bool) (string, [][]channel.Button) {
	var b strings.Builder
	plan := qu.r.text
	switch {
	case plan == "":
		b.WriteString("📋 **claude asks to leave plan mode and start working**, but sent no plan (it wrote no plan file).\n\n")
	case whole:
		b.WriteString("📋 **claude's plan**\n\n" + plan + "\n\n")
	default:
		fmt.Fprintf(&b, "📋 **claude's plan** is in the attached file %s (%s, %s) — read it before you approve it.\n\n",
			planFile, count(lineCount(plan), "line"), count(utf8.RuneCountInString(plan), "character"))
	}
	if qu.forOther {
		fmt.Fprintf(&b, "Asked in a turn of %s in %s:%s.\n", visible(qu.asker()), qu.q.Target.Instance, qu.q.Target.ChatID)
	}
	wait, where := spoken.Precise(cfg.Timeout), qu.feedbackWhere()
	if buttons {
		fmt.Fprintf(&b, "Approve lets claude carry it out; Keep planning sends it back, and your next message %s is the feedback. No answer in %s: claude keeps planning.", where, wait)
		return b.String(), [][]channel.Button{{{ID: buttonPrefix + qu.id + ":y", Label: "Approve"}, {ID: buttonPrefix + qu.id + ":" + keepVerb, Label: "Keep planning"}}}
	}
	fmt.Fprintf(&b, "Reply approve to let claude carry it out, or keep planning to send it back (your next message %s is then the feedback). No answer in %s: claude keeps planning.", where, wait)
	return b.String(), nil
}

// feedbackWhere says where the feedback on a plan sent back is written:
// the turn's chat, which is not the one asked for a question sent to an
// owner's own chat about another person's turn.
func (qu *question) feedbackWhere() string {
	if qu.forOther {
		return "in " + qu.q.Target.Instance + ":" + qu.q.Target.ChatID + " (the turn's chat)"
	}
	return "here"
}

// asker names who started the turn, for a question asked elsewhere.
func (qu *question) asker() string {
	switch who := qu.q.AskerName; {
	case qu.q.Asker == "":
		return "a scheduled turn"
	case who == "":
		return qu.q.Asker
	default:
		return who + " (" + qu.q.Asker + ")"
	}
}

// sendPlan sends a plan question to chat t: whole when it fits one
// message, else the plan as planFile and the question under it (the whole
// plan in the text, over several messages, when no file can be sent).
func (a *Approvals) sendPlan(qu *question, t message.Target, cfg Config) string {
	buttons := a.out.HasButtons(t.Instance)
	text, rows := qu.renderPlanQuestion(cfg, buttons, true)
	if !a.out.Fits(t.Instance, text, channel.FormatMarkdown) {
		caption := fmt.Sprintf("claude's plan (%s), for the question below.", count(lineCount(qu.r.text), "line"))
		if a.out.SendFile(qu.q.Key, t, planFile, qu.r.file, caption) {
			text, rows = qu.renderPlanQuestion(cfg, buttons, false)
		}
	}
	ids := a.out.SendButtons(qu.q.Key, t, text, channel.FormatMarkdown, rows)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// keepPlanning is what claude reads when a plan is sent back.
func keepPlanning(by string) string {
	return "The user (" + by + ", from the chat) did not approve this plan: keep planning, do not start the work. " +
		"Their feedback on the plan comes in their next message; end this turn now, then revise the plan with it and present it again."
}

// planResultLine replaces a plan question once it is decided.
func (qu *question) planResultLine(o Outcome, cfg Config) string {
	switch {
	case o.By == "withdrawn":
		return "(Question withdrawn: the turn ended.) claude's plan"
	case o.By == "timeout":
		return fmt.Sprintf("⏱ No answer within %s — the plan was not approved; claude keeps planning.", spoken.Precise(cfg.Timeout))
	case o.Decision.Allow:
		return fmt.Sprintf("✅ Plan approved by %s: claude carries it out.", o.By)
	case o.KeepPlanning:
		return fmt.Sprintf("📝 %s sent the plan back: their next message %s is the feedback.", o.By, qu.feedbackWhere())
	}
	return fmt.Sprintf("❌ Plan not approved (%s).", o.By)
}

// typedPlan reads a typed answer to a plan question: approve, or keep
// planning. always is no answer to a plan (refused: each plan is
// approved on its own).
func typedPlan(text string) (v verdict, ok, always bool) {
	w := strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!?"))
	switch w {
	case "yes", "y", "approve", "approved", "ok", "allow", "go", "go ahead":
		return verdict{allow: true}, true, false
	case "keep planning", "keep", "no", "n", "deny", "reject", "not yet":
		return verdict{keep: true}, true, false
	case "always", "always allow", "always approve":
		return verdict{}, false, true
	}
	return verdict{}, false, false
}

// noAlwaysForPlans answers a typed "always" to a plan.
const noAlwaysForPlans = "A plan has no \"always\": each one is approved on its own. Reply approve, or keep planning."

// isPlan reports whether req asks to carry out a plan.
func isPlan(req *runner.PermissionRequest) bool { return req.Tool == runner.ExitPlanMode }
