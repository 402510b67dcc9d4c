package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/cron"
)

// Schedule is a schedule "<name>" block: a turn clawhost starts by itself
// at the times cron says, in a chat, as if prompt had been written there.
//
//	schedule "morning" {
//	  cron     = "0 9 * * 1-5"
//	  timezone = "Europe/Berlin"
//	  chat     = "tg:123456789"
//	  prompt   = "Summarize my calendar for today."
//	}
type Schedule struct {
	// Name is the block's label: the schedule's name, unique in the file.
	Name string `hcl:"name,label"`
	// Cron is the five-field expression (cron).
	Cron string `hcl:"cron"`
	// Timezone is an IANA zone (timezone); default messages.timezone,
	// else the machine's.
	Timezone string `hcl:"timezone,optional"`
	// Chat is where the turn runs and answers, "<instance>:<chat id>"
	// (chat); Group marks a group chat (group), whose session it then
	// shares.
	Chat  string `hcl:"chat"`
	Group bool   `hcl:"group,optional"`
	// Prompt is the message the agent gets (prompt).
	Prompt string `hcl:"prompt"`
	// Agent runs the turn (agent): an agent's id; default the agent Chat
	// is bound to.
	Agent string `hcl:"agent,optional"`
}

// Heartbeat is the heartbeat {} block: a periodic turn in a chat that reads
// HEARTBEAT.md in the workspace; a reply that is only HEARTBEAT_OK is not
// delivered.
type Heartbeat struct {
	// Every is the interval (every), e.g. "30m".
	Every Duration `hcl:"every"`
	// Chat and Group are as in a schedule.
	Chat  string `hcl:"chat"`
	Group bool   `hcl:"group,optional"`
	// Prompt replaces DefaultHeartbeatPrompt (prompt).
	Prompt string `hcl:"prompt,optional"`
	// QuietHours, "HH:MM-HH:MM" in Timezone, are skipped (quiet_hours).
	QuietHours string `hcl:"quiet_hours,optional"`
	// Timezone of the quiet hours (timezone); default messages.timezone.
	Timezone string `hcl:"timezone,optional"`
	// Agent runs the turn (agent), as in a schedule.
	Agent string `hcl:"agent,optional"`
	// Model is the model of the heartbeat's turns (model), e.g. a cheap
	// one; default the session's. While HEARTBEAT.md in the workspace has
	// only headings and comments, no heartbeat turn runs at all.
	Model string `hcl:"model,optional"`
}

// DefaultHeartbeatPrompt is the heartbeat turn's message (OpenClaw's
// heartbeat: HEARTBEAT.md holds what to check; HEARTBEAT_OK means nothing
// to say).
const DefaultHeartbeatPrompt = "Heartbeat: read HEARTBEAT.md in the workspace if it exists and follow it. If nothing needs the user's attention, reply with exactly HEARTBEAT_OK."

var quietRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$`)
})

// QuietFunc parses "HH:MM-HH:MM" (a span that may wrap midnight) into a
// test of times in loc; "" is never quiet.
func QuietFunc(span string, loc *time.Location) (func(time.Time) bool, error) {
	if span == "" {
		return nil, nil
	}
	m := quietRe().FindStringSubmatch(span)
	if m == nil {
		return nil, fmt.Errorf("%q is not HH:MM-HH:MM", span)
	}
	mins := func(h, mi string) int {
		var a, b int
		fmt.Sscan(h, &a)
		fmt.Sscan(mi, &b)
		return a*60 + b
	}
	from, to := mins(m[1], m[2]), mins(m[3], m[4])
	return func(t time.Time) bool {
		t = t.In(loc)
		x := t.Hour()*60 + t.Minute()
		if from <= to {
			return x >= from && x < to
		}
		return x >= from || x < to
	}, nil
}

// checkSchedules checks the schedule blocks and the heartbeat.
func checkSchedules(k *checker, c *Config) {
	bodies := k.blocks("schedule", "name")
	seen := map[string]bool{}
	for i, s := range c.Schedules {
		sk := k.subAt(bodies, i, fmt.Sprintf("schedule %q", s.Name))
		if seen[s.Name] {
			sk.errorf(sk.valueRange("cron"), "Duplicate schedule", "Schedule %q is defined twice; names must be unique.", s.Name)
		}
		seen[s.Name] = true
		if _, err := cron.Parse(s.Cron); err != nil {
			sk.errorf(sk.valueRange("cron"), "Invalid value for "+sk.qualified("cron"), "%v.", err)
		}
		if s.Timezone != "" {
			if _, err := time.LoadLocation(s.Timezone); err != nil {
				sk.errorf(sk.valueRange("timezone"), "Unknown time zone in "+sk.qualified("timezone"), "%q is not an IANA time zone such as \"Europe/Berlin\".", s.Timezone)
			}
		}
		sk.entry("chat", "chat", s.Chat, sk.valueRange("chat"), func(c string) { s.Chat = c })
		sk.agentRef("agent", s.Agent)
		if strings.TrimSpace(s.Prompt) == "" {
			sk.errorf(sk.valueRange("prompt"), "Empty "+sk.qualified("prompt"), "A schedule needs the message the agent gets.")
		}
	}
	if h := c.Heartbeat; h != nil {
		hk := k.block("heartbeat")
		hk.duration("every", h.Every)
		hk.entry("chat", "chat", h.Chat, hk.valueRange("chat"), func(c string) { h.Chat = c })
		hk.agentRef("agent", h.Agent)
		if h.Timezone != "" {
			if _, err := time.LoadLocation(h.Timezone); err != nil {
				hk.errorf(hk.valueRange("timezone"), "Unknown time zone in "+hk.qualified("timezone"), "%q is not an IANA time zone such as \"Europe/Berlin\".", h.Timezone)
			}
		}
		if _, err := QuietFunc(h.QuietHours, time.UTC); err != nil {
			hk.errorf(hk.valueRange("quiet_hours"), "Invalid value for "+hk.qualified("quiet_hours"), "%v: write the span as \"23:00-07:00\".", err)
		}
	}
}

// agentRef checks an attribute naming an agent: empty, or an agent's id.
func (k *checker) agentRef(name, id string) {
	if id == "" || k.cfg.AgentByID(id) != nil {
		return
	}
	var ids []string
	for _, a := range k.cfg.AllAgents() {
		if !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	k.errorf(k.valueRange(name), "Unknown agent in "+k.qualified(name),
		"No agent %q is defined: the agents are %s.%s", id, quoteList(ids), didYouMean(id, ids))
}
