package chaos

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawhost/clawhost/core/internal/fakeclaude"
)

// row is one scenario's line of the table.
type row struct {
	name                            string
	trials, msgs                    int
	answered, lost, doubled         int
	uncertainTold, otherTold        int
	reruns, finishedReruns, orphans int
	unfinished, chargedTwice        int
	// doneTwice: messages whose plugin tool's side effect (a note)
	// happened more than once (the plugin-tool scenario).
	doneTwice int
	// costOff: messages whose ledger cost is not their turn's true cost
	// (markCost, when the journal recorded claude's reply; else 0);
	// costRecorded and costTrue are the sums. stopsLeft: bot messages
	// still showing a turn card's Stop button in the end.
	costOff, stopsLeft                      int
	costRecorded, costTrue                  float64
	recMedian, recMax                       time.Duration
	skipped                                 bool
	notes                                   []string
	failures                                []string // one line per lost, doubled, finished re-run or orphan
	uncertainNotices, restartNotices, kills int
	// givenUp: messages failed as interrupted ("the gateway restarted
	// twice"); ranTwice: those of them whose prompt the fake claude read
	// at least twice (its run log's starts). They must be equal: a launch
	// killed before claude read the prompt is no run. falseNotices: "may
	// be missing" notices that excuse no missing part.
	givenUp, ranTwice, falseNotices int
	strictNotices                   bool
}

func (r row) failed() bool {
	return r.lost+r.doubled+r.finishedReruns+r.orphans+r.unfinished+r.chargedTwice+r.costOff+r.stopsLeft+r.doneTwice > 0 ||
		r.givenUp != r.ranTwice || r.strictNotices && r.falseNotices > 0
}

// Notices the host sends instead of (part of) a reply; see core/delivery,
// core/turn and core/gateway.
const (
	noticeUncertain = "may be missing"
	noticeRestart   = "the reply starts again"
	// noticeDraft precedes a reply whose live draft's first send lost its
	// answer: the draft may show above it, a cut-off copy.
	noticeDraft = "may show above"
)

var noticesOther = []string{"could not be delivered", "could not be answered", "too old to deliver"}

// run is one turn of the fake claude.
type run struct {
	pid           int
	start, result int64
}

// runs reads the run log: the turns of each mark, in order of start.
func (e *env) runs() map[string][]*run {
	evs := e.runEvents()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].At < evs[j].At })
	out := map[string][]*run{}
	for _, ev := range evs {
		for _, m := range ev.Marks {
			switch ev.Event {
			case "start":
				out[m] = append(out[m], &run{pid: ev.PID, start: ev.At})
			case "result":
				rs := out[m]
				for i := len(rs) - 1; i >= 0; i-- {
					if rs[i].pid == ev.PID && rs[i].result == 0 {
						rs[i].result = ev.At
						break
					}
				}
			}
		}
	}
	return out
}

// finishedRerun says why run k of rs was a re-run of a finished turn, or
// "" when it was not: an earlier run had written its result, and either
// the host was not SIGKILLed between that run's start and run k, or the
// journal recorded the reply before run k started. A kill after the run
// started and before its result counts: claude outlives the host by a few
// milliseconds (its lifeline notices the death) and may write a result
// nobody reads any more.
func (e *env) finishedRerun(rs []*run, k int, en entry) string {
	for j := range k {
		if rs[j].result == 0 || rs[j].result > rs[k].start {
			continue
		}
		if en.hasReply && en.producedAt < rs[k].start {
			return fmt.Sprintf("run %d started %v after the reply was recorded", k+1, time.Duration(rs[k].start-en.producedAt))
		}
		killed := slices.ContainsFunc(e.kills, func(at time.Time) bool {
			return at.UnixNano() > rs[j].start && at.UnixNano() < rs[k].start
		})
		if !killed {
			return fmt.Sprintf("run %d started %v after run %d wrote its result, with no SIGKILL of the host in between",
				k+1, time.Duration(rs[k].start-rs[j].result), j+1)
		}
	}
	return ""
}

// chatViews is what each chat shows in the end (platform.views).
func (e *env) chatViews() map[string][]string { return e.plat.views() }

func count(view []string, f func(string) bool) int {
	n := 0
	for _, v := range view {
		if f(v) {
			n++
		}
	}
	return n
}

// tally judges every message of the scenario (see the package
// documentation) once the host is stopped.
func (e *env) tally() row {
	r := row{name: e.sc.name, trials: e.trials, msgs: len(e.msgs), orphans: len(e.orphans), notes: e.notes, kills: len(e.kills), strictNotices: e.sc.noFalseNotices}
	for _, o := range e.orphans {
		r.failures = append(r.failures, "orphan "+o)
	}
	views := e.chatViews()
	if e.sc.sendingHook {
		unshaped := strings.Repeat("x", 90)
		for chat, view := range views {
			if n := count(view, func(v string) bool { return strings.Contains(v, "mark ") && strings.Contains(v, unshaped) }); n > 0 {
				r.failures = append(r.failures, fmt.Sprintf("chat %s shows %d replies the message_sending hook did not shape", chat, n))
			}
		}
	}
	runs := e.runs()
	var notes map[string]int
	if e.sc.pluginTool {
		notes = e.toolNotes()
	}
	// Notices still to be matched with a message, per chat and kind.
	spare := map[string]int{}
	for chat, view := range views {
		u := count(view, func(v string) bool { return strings.Contains(v, noticeUncertain) })
		rs := count(view, func(v string) bool { return strings.Contains(v, noticeRestart) })
		r.uncertainNotices += u
		r.restartNotices += rs
		spare[chat+"|uncertain"] = u
		spare[chat+"|restart"] = rs
		spare[chat+"|draft"] = count(view, func(v string) bool { return strings.Contains(v, noticeDraft) })
		spare[chat+"|other"] = count(view, func(v string) bool {
			return slices.ContainsFunc(noticesOther, func(n string) bool { return strings.Contains(v, n) })
		})
	}
	take := func(key string) bool {
		if spare[key] > 0 {
			spare[key]--
			return true
		}
		return false
	}
	for _, m := range e.msgs {
		chat := m.chatID
		view := views[chat]
		en, err := e.entry(m)
		if err != nil {
			r.notes = append(r.notes, fmt.Sprintf("%s: journal: %v", m.mark, err))
		}
		copies := make([]int, m.parts)
		for i := range copies {
			label := fakeclaude.PartLabel(m.mark, i+1, m.parts) + " "
			copies[i] = count(view, func(v string) bool { return strings.Contains(v, label) })
		}
		rs := runs[m.mark]
		if len(rs) >= 2 {
			r.reruns++
		}
		if en.found && en.state == "failed" && en.reason == "interrupted" {
			r.givenUp++
			if len(rs) >= 2 {
				r.ranTwice++
			} else {
				r.failures = append(r.failures, fmt.Sprintf("given up after claude read its prompt %d times: %s (trial %d, chat %s)", len(rs), m.mark, m.trial, chat))
			}
		}
		for k := 1; k < len(rs); k++ {
			if why := e.finishedRerun(rs, k, en); why != "" {
				r.finishedReruns++
				r.failures = append(r.failures, fmt.Sprintf("finished re-run %s (trial %d, chat %s): %s", m.mark, m.trial, chat, why))
				break
			}
		}
		// A reply without the mark is the agent's error notice (claude
		// died): the chat shows it as often as messages got it.
		if key := chat + "|reply:" + en.replyText; en.hasReply && !strings.Contains(en.replyText, m.mark) {
			if _, ok := spare[key]; !ok {
				spare[key] = count(view, func(v string) bool { return strings.TrimSpace(v) == strings.TrimSpace(en.replyText) })
			}
		}
		desc := fmt.Sprintf("%s (trial %d, chat %s, message %s): copies per part %v, journal %+v, runs %d", m.mark, m.trial, chat, m.id, copies, en, len(rs))
		// The ledger: the turn whose reply the journal recorded was
		// claude's (the reply has the mark) costs markCost, once; any
		// other ending (claude killed: the error notice) costs nothing
		// anyone reported.
		claudes := en.hasReply && strings.Contains(en.replyText, m.mark)
		want := 0.0
		if claudes {
			want = markCost(m.mark)
		}
		r.costTrue += want
		r.costRecorded += en.cost
		switch {
		case en.charges > 1 || want > 0 && en.cost > 1.5*want:
			r.chargedTwice++
			r.failures = append(r.failures, fmt.Sprintf("charged %d times, $%v for a $%v turn: %s", en.charges, en.cost, want, desc))
		case math.Abs(en.cost-want) > 1e-9:
			r.costOff++
			r.failures = append(r.failures, fmt.Sprintf("ledger $%v for a $%v turn: %s", en.cost, want, desc))
		}
		// claude's files and reactions (the tools scenario): a file the
		// chat shows twice is doubled, one missing from a reply claude
		// gave and the chat shows is lost; a reaction missing from the
		// message claude answered is lost, one set more often than claude
		// ran is doubled (the host's own seen reaction, 👀, is not
		// claude's).
		var extraLost, extraDoubled []string
		if tg, ok := e.plat.(*telegramPlatform); ok {
			if m.file != "" {
				switch n := tg.documents(chat, m.file); {
				case n > 1:
					extraDoubled = append(extraDoubled, fmt.Sprintf("file %s sent %d times", m.file, n))
				case n == 0 && claudes:
					extraLost = append(extraLost, fmt.Sprintf("file %s not sent", m.file))
				}
			}
			if m.emoji != "" {
				got, asked := tg.reaction(chat, m.id, m.emoji)
				if got != m.emoji && claudes {
					extraLost = append(extraLost, fmt.Sprintf("reaction %q, want %s", got, m.emoji))
				}
				if asked > len(rs) {
					extraDoubled = append(extraDoubled, fmt.Sprintf("reaction set %d times in %d runs", asked, len(rs)))
				}
			}
		}
		// The plugin tool's side effect (the plugin-tool scenario): a
		// note written twice for one message is done twice, whatever the
		// chat shows; one missing from a reply claude gave is lost.
		if m.note {
			switch n := notes[m.mark]; {
			case n > 1:
				r.doneTwice++
				r.failures = append(r.failures, fmt.Sprintf("done %d times (note written %d times in %d runs): %s", n, n, len(rs), desc))
			case n == 0 && claudes:
				extraLost = append(extraLost, "note not written")
			}
		}
		if en.found && !finished(en.state) {
			r.unfinished++
			r.failures = append(r.failures, "unfinished "+desc)
		}
		if len(extraDoubled) > 0 {
			r.doubled++
			r.failures = append(r.failures, fmt.Sprintf("doubled (%s) %s", strings.Join(extraDoubled, "; "), desc))
			continue
		}
		switch {
		case !slices.ContainsFunc(copies, func(c int) bool { return c != 1 }) && len(extraLost) > 0:
			r.lost++
			r.failures = append(r.failures, fmt.Sprintf("lost (%s) %s", strings.Join(extraLost, "; "), desc))
		case !slices.ContainsFunc(copies, func(c int) bool { return c != 1 }):
			r.answered++
		case slices.ContainsFunc(copies, func(c int) bool { return c > 1 }):
			if len(rs) >= 2 && take(chat+"|restart") || take(chat+"|draft") {
				r.otherTold++
			} else {
				r.doubled++
				r.failures = append(r.failures, "doubled "+desc)
			}
		case en.found && en.uncertain > 0 && take(chat+"|uncertain"):
			r.uncertainTold++
		case en.found && en.state == "failed" && take(chat+"|other"):
			r.otherTold++
		case en.found && en.hasReply && en.replyText != "" && !strings.Contains(en.replyText, m.mark) && take(chat+"|reply:"+en.replyText):
			r.otherTold++
		default:
			r.lost++
			r.failures = append(r.failures, "lost "+desc)
		}
	}
	for chat := range views {
		if n := spare[chat+"|uncertain"]; n > 0 {
			r.falseNotices += n
			if r.strictNotices {
				r.failures = append(r.failures, fmt.Sprintf("chat %s was told %d times a part may be missing with no part missing", chat, n))
			}
		}
	}
	for _, k := range e.liveStops() {
		r.stopsLeft++
		r.failures = append(r.failures, "a turn card still shows its Stop button: message "+k)
	}
	slices.Sort(e.recovery)
	if n := len(e.recovery); n > 0 {
		r.recMedian, r.recMax = e.recovery[n/2], e.recovery[n-1]
	}
	return r
}

// printTable writes the campaign's one table.
func printTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\ttrials\tmessages\tanswered 1\tlost\tdoubled\tuncertain told\tother told\truns ×2\tgiven up\tran twice\tfalse notices\tfinished re-run\tcharged ×2\tcost off\tstop left\tdone ×2\torphans\tunfinished\trecovery median\trecovery max\t")
	var tot row
	for _, r := range rows {
		if r.skipped {
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", r.name, "skipped")
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", r.name, r.trials, r.msgs, r.answered, r.lost, r.doubled,
			r.uncertainTold, r.otherTold, r.reruns, r.givenUp, r.ranTwice, r.falseNotices, r.finishedReruns, r.chargedTwice, r.costOff, r.stopsLeft, r.doneTwice, r.orphans, r.unfinished, dur(r.recMedian), dur(r.recMax))
		tot.trials += r.trials
		tot.msgs += r.msgs
		tot.answered += r.answered
		tot.lost += r.lost
		tot.doubled += r.doubled
		tot.uncertainTold += r.uncertainTold
		tot.otherTold += r.otherTold
		tot.reruns += r.reruns
		tot.givenUp += r.givenUp
		tot.ranTwice += r.ranTwice
		tot.falseNotices += r.falseNotices
		tot.finishedReruns += r.finishedReruns
		tot.orphans += r.orphans
		tot.unfinished += r.unfinished
		tot.chargedTwice += r.chargedTwice
		tot.costOff += r.costOff
		tot.stopsLeft += r.stopsLeft
		tot.doneTwice += r.doneTwice
		tot.costRecorded += r.costRecorded
		tot.costTrue += r.costTrue
		tot.recMax = max(tot.recMax, r.recMax)
	}
	fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t\n", "total", tot.trials, tot.msgs, tot.answered, tot.lost, tot.doubled,
		tot.uncertainTold, tot.otherTold, tot.reruns, tot.givenUp, tot.ranTwice, tot.falseNotices, tot.finishedReruns, tot.chargedTwice, tot.costOff, tot.stopsLeft, tot.doneTwice, tot.orphans, tot.unfinished, "", dur(tot.recMax))
	tw.Flush()
	fmt.Fprintf(w, "ledger: $%.6f recorded, $%.6f the turns' true cost\n", tot.costRecorded, tot.costTrue)
}

func dur(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return d.Round(10 * time.Millisecond).String()
}
