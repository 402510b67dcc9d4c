package approval

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/clawhost/clawhost/core/internal/spoken"
	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/sdk/channel"
)

const choicePrefix = "aq:"

// choiceInput is AskUserQuestion's input.
type choiceInput struct {
	Questions []struct {
		Question    string `json:"question"`
		Header      string `json:"header"`
		MultiSelect bool   `json:"multiSelect"`
		Options     []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

// clean is text the model wrote, visible and cut for a question.
func clean(s string) string { return cut(visible(s), summaryLen, summaryLines) }

// choose asks the chat claude's questions one by one — the options as
// buttons where the channel has them, numbered in the text everywhere —
// and answers with what was picked. A typed answer is an option's number
// (several, comma-separated, where claude allows several), its label, or
// the person's own words. A question left unanswered denies the tool.
func (a *Approvals) choose(ctx context.Context, q Question) Outcome {
	cfg := a.config()
	var in choiceInput
	var raw map[string]any
	if json.Unmarshal(q.Request.Input, &in) != nil || json.Unmarshal(q.Request.Input, &raw) != nil || len(in.Questions) == 0 {
		return Outcome{Decision: runner.Decision{Message: "The questions could not be read, so they were not asked."}, By: "unreadable"}
	}
	answers := map[string]string{}
	var by []string
	for _, cq := range in.Questions {
		// Asked in the turn's chat: the asker answers, and owners (may).
		qu := &question{id: newID(), q: q, summary: clean(cq.Question), since: a.now(), answers: make(chan verdict, 1), multi: cq.MultiSelect,
			ownersOnly: cfg.OwnersOnly}
		var b strings.Builder
		fmt.Fprintf(&b, "claude asks: %s\n", clean(cq.Question))
		var rows [][]channel.Button
		for i, o := range cq.Options {
			label := clean(o.Label)
			qu.choices = append(qu.choices, o.Label)
			fmt.Fprintf(&b, "%d. %s", i+1, label)
			if o.Description != "" {
				fmt.Fprintf(&b, " — %s", clean(o.Description))
			}
			b.WriteString("\n")
			if r := []rune(label); len(r) > 40 {
				label = string(r[:39]) + "…"
			}
			rows = append(rows, []channel.Button{{ID: choicePrefix + qu.id + ":" + strconv.Itoa(i), Label: label}})
		}
		how := "Reply with a number or in your own words."
		if cq.MultiSelect {
			how = "Reply with one or more numbers (1, 3) or in your own words."
		}
		if a.out.HasButtons(q.Target.Instance) && !cq.MultiSelect {
			how = "Press one, or reply in your own words."
		}
		fmt.Fprintf(&b, "%s No answer in %s skips it.", how, spoken.Precise(cfg.Timeout))
		if cq.MultiSelect {
			rows = nil // several choices are typed
		}
		a.mu.Lock()
		a.open[qu.id] = qu
		qu.targets = []message.Target{q.Target} // before the send (see Ask)
		a.mu.Unlock()
		ids := a.out.SendButtons(q.Key, q.Target, b.String(), channel.FormatPlain, rows)
		if len(ids) > 0 {
			a.mu.Lock()
			qu.asked = []sentTo{{q.Target, ids[len(ids)-1]}}
			a.mu.Unlock()
		}
		v, o, ok := a.await(ctx, qu, ids, cfg)
		a.mu.Lock()
		delete(a.open, qu.id)
		a.mu.Unlock()
		if len(ids) > 0 {
			end := "❓ " + qu.summary + "\n"
			switch {
			case ok:
				end += "→ " + clean(v.text) + " (" + v.by + ")"
			case o.By == "timeout":
				end += "No answer within " + spoken.Precise(cfg.Timeout) + "."
			default:
				end += "(Question withdrawn: the turn ended.)"
			}
			a.out.EditText(q.Target, ids[len(ids)-1], end)
		}
		if !ok {
			return a.decided(qu, o)
		}
		answers[cq.Question] = v.text
		by = append(by, v.by)
	}
	raw["answers"] = answers
	updated, _ := json.Marshal(raw)
	o := Outcome{Decision: runner.Decision{Allow: true, UpdatedInput: updated}, By: strings.Join(by, ", ")}
	a.log.Info("question answered", "session", q.Key, "questions", len(in.Questions), "by", o.By)
	return o
}

// await waits for the answer to a choice question.
func (a *Approvals) await(ctx context.Context, qu *question, ids []string, cfg Config) (verdict, Outcome, bool) {
	if len(ids) == 0 {
		return verdict{}, Outcome{Decision: runner.Decision{Message: "The question could not be sent to the user."}, By: "undeliverable"}, false
	}
	select {
	case v := <-qu.answers:
		return v, Outcome{}, true
	case <-a.after(cfg.Timeout):
		return verdict{}, Outcome{Decision: runner.Decision{Message: fmt.Sprintf("The user did not answer within %s. Go on without the answer or ask in your reply.", spoken.Precise(cfg.Timeout))}, By: "timeout"}, false
	case <-qu.q.Request.Withdrawn:
	case <-ctx.Done():
	}
	return verdict{}, Outcome{By: "withdrawn"}, false
}

// pick reads a typed answer to a choice question: option numbers, an
// option's label, or the person's own words.
func (qu *question) pick(text string) string {
	text = strings.TrimSpace(text)
	var picked []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(qu.choices) {
			picked = nil
			break
		}
		picked = append(picked, qu.choices[n-1])
	}
	if len(picked) == 1 || (len(picked) > 1 && qu.multi) {
		return strings.Join(picked, ", ")
	}
	for _, c := range qu.choices {
		if strings.EqualFold(c, text) {
			return c
		}
	}
	return text
}
