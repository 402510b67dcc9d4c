package export

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// Message is one inbound message of the session as the host's journal
// has it, with what answered it.
type Message struct {
	// At is when the host received it; From who sent it, as the reader
	// knows them ("Alice (tg:5)", "heartbeat", "schedule:standup").
	At   time.Time
	From string
	Text string
	// Refused, when set, says why the message never reached claude
	// ("refused: rate limited") or went unanswered.
	Refused string
	// Reply is the reply recorded for it ("" none: answered with the
	// messages after it, or not at all), ReplyAt when it was produced.
	// ByHost: the host answered it (a command, a budget's notice), not
	// claude.
	Reply   string
	ReplyAt time.Time
	ByHost  bool
}

// Write writes the session as Markdown to w: the header, then msgs (the
// journal's) merged by time with the tool steps of the transcript at path
// ("" none: the file says the steps are missing). With no msgs the
// conversation is the transcript's alone. It returns how many messages
// (or, from the transcript alone, prompts) it wrote.
func Write(w io.Writer, s Session, msgs []Message, path string, loc *time.Location) (int, error) {
	if loc == nil {
		loc = time.Local
	}
	header(w, s, loc)
	if len(msgs) == 0 {
		return writeTranscript(w, path, loc)
	}
	var steps []event
	if path != "" {
		var err error
		if steps, err = toolSteps(path); err != nil {
			return 0, err
		}
		fmt.Fprint(w, "- from the host's journal (messages and replies) and claude's transcript (tool steps)\n\n")
	} else {
		fmt.Fprintf(w, "- from the host's journal (messages and replies); %s, so tool steps are not shown\n\n", ErrNoTranscript)
	}
	events := steps
	for i := range msgs {
		events = append(events, event{at: msgs[i].At, idx: i, rank: rankMessage, msg: &msgs[i]})
		if msgs[i].Reply != "" {
			events = append(events, event{at: msgs[i].ReplyAt, idx: i, rank: rankReply, msg: &msgs[i]})
		}
	}
	// By time. At one instant (a coarse clock) the journal's order holds
	// — a message, then its reply, then the next message — and a step
	// comes after them.
	slices.SortStableFunc(events, func(a, b event) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.idx, b.idx), a.rank-b.rank)
	})
	for _, e := range events {
		switch e.rank {
		case rankMessage:
			m := e.msg
			title := m.From
			if title == "" {
				title = "Message"
			}
			note := ""
			if m.Refused != "" {
				note = " · " + m.Refused
			}
			fmt.Fprintf(w, "## %s · %s%s\n\n%s\n\n", title, m.At.In(loc).Format("2006-01-02 15:04"), note, quoteEmpty(m.Text))
		case rankStep:
			fmt.Fprintf(w, "- 🔧 %s\n\n", e.step)
		case rankReply:
			who := "**claude**"
			if e.msg.ByHost {
				who = "**clawhost** (answered by the host; claude did not see it)"
			}
			_, err := fmt.Fprintf(w, "%s · %s\n\n%s\n\n", who, e.msg.ReplyAt.In(loc).Format("15:04"), strings.TrimSpace(e.msg.Reply))
			if err != nil {
				return 0, err
			}
		}
	}
	return len(msgs), nil
}

// The kinds of event in the merged conversation.
const (
	rankMessage = iota
	rankStep
	rankReply
)

type event struct {
	at time.Time
	// idx is the message's place in the journal (a step: after all).
	idx  int
	rank int
	msg  *Message
	step string // rankStep: "Bash: `ls`"
}

func quoteEmpty(text string) string {
	if strings.TrimSpace(text) == "" {
		return "_(no text)_"
	}
	return strings.TrimSpace(text)
}

// toolSteps reads the tool calls of the transcript at path (claude's own
// turn, not a subagent's), with their times.
func toolSteps(path string) ([]event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []event
	for sc.Scan() {
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.IsSidechain || l.Message == nil || l.Type != "assistant" {
			continue
		}
		var blocks []block
		if json.Unmarshal(l.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "tool_use" {
				out = append(out, event{at: l.Timestamp, idx: math.MaxInt, rank: rankStep, step: b.Name + gist(b.Input)})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the transcript: %w", err)
	}
	return out, nil
}
