// Command benchreport reads the output of `go test -bench` (from the files
// named on the command line, or standard input) and prints one table: each
// figure the project holds itself to, its goal, the measured value and
// whether it meets the goal. `make bench` ends with it, so a regression is
// visible at a glance. A benchmark run several times (-count) is reported
// by its median. Figures whose benchmark did not run are listed as such.
//
//	go test -run '^$' -bench . ./... | tee bench.txt
//	go run ./core/cmd/benchreport bench.txt
//
// With -base FILE (the same benchmarks run on an earlier build, as
// `make bench BENCH_BASE=v0.1.0` does) the table shows that build's median
// beside the tree's and the change between them; the verdict is the
// tree's. The machine's speed moves between days by more than most goals'
// margins: the two columns, run interleaved on one machine, are what to
// compare.
//
//	go run ./core/cmd/benchreport -base bench-base.txt -base-name v0.1.0 bench.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// figure is one line of the report: the metric a benchmark reports and
// the bound it must keep. Max true: the value must not exceed Goal; false:
// it must reach it. Info figures have no goal: they are shown, not judged.
type figure struct {
	Name   string // what the figure is, for the reader
	Bench  string // benchmark name without the -GOMAXPROCS suffix
	Metric string // the unit go test prints after the value
	Goal   float64
	Max    bool
	Info   bool
	Scale  float64 // the value is divided by it for display (ns → ms: 1e6)
	Unit   string  // the displayed unit
	// Process, when set, is the same figure at storage { durability =
	// "process" } (a write survives kill -9, not a power loss: the peers'
	// durability): the metric of processBench (both durabilities in
	// alternate rounds of one run) shown in the PROCESS column beside the
	// default's value, as information.
	Process string
	// Base, when set, names a benchmark whose median of the same metric
	// is subtracted: the figure is what Bench adds to Base (a feature on
	// against off). Only for benchmarks that ran in one process side by
	// side; not run when either did not.
	Base string
}

// figures are the goals of the performance issues, in their order: the
// inbound path, the pipeline's floor, the real binary's loads, idle memory
// and CPU, what each feature costs the hot path, and many chats.
var figures = []figure{
	{Name: "inbound → claude stdin, warm session, p50", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "run-p50-ns", Goal: 1e6, Max: true, Scale: 1e6, Unit: "ms"},
	{Name: "inbound → claude stdin, warm session, p99", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "run-p99-ns", Goal: 5e6, Max: true, Scale: 1e6, Unit: "ms"},
	{Name: "inbound → claude stdin under load, p50", Bench: "BenchmarkInboundToRunUnderLoad", Metric: "run-p50-ns", Goal: 1e6, Max: true, Scale: 1e6, Unit: "ms"},
	{Name: "inbound → claude stdin under load, p99", Bench: "BenchmarkInboundToRunUnderLoad", Metric: "run-p99-ns", Goal: 5e6, Max: true, Scale: 1e6, Unit: "ms"},
	// What the machine adds to 1 ms of pure CPU work at p99 (a VM's
	// stolen time): the floor under the two p99s above.
	{Name: "machine floor: 1 ms of CPU work, p99", Bench: "BenchmarkMachineFloor", Metric: "work-p99-ns", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "fsyncs per message, inbound → stdin", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "fsyncs/msg", Goal: 1, Max: true, Scale: 1, Unit: ""},
	// The plugin's ack waits for the accept's fsync, which runs beside
	// the turn since the message goes on at the commit (docs/guarantees.md).
	{Name: "inbound → the plugin's ack (the accept's fsync), p50", Bench: "BenchmarkInboundToRun/sync=FULL", Metric: "ack-p50-ns", Info: true, Scale: 1e6, Unit: "ms"},
	// The outbound path through the real binary, the Telegram plugin and
	// the fake Bot API, a warm session, an instant fake claude
	// (core/e2e/outbound_bench_test.go): claude's result line → sendMessage,
	// and with the inbound part (update handed out → prompt read by claude).
	// Issue 58's goals are at the peers' durability (a write survives
	// the death of the process, not a power loss: storage { durability =
	// "process" }), in BenchmarkOutboundDurability's rows below; these
	// rows, at the default (fsynced), keep the earlier goals.
	{Name: "out: claude's result → sendMessage, warm, p50", Bench: "BenchmarkOutboundTelegram", Metric: "out-p50-ms", Process: "process-out-p50-ms", Goal: 0.8, Max: true, Scale: 1, Unit: "ms"},
	{Name: "out: claude's result → sendMessage, warm, p99", Bench: "BenchmarkOutboundTelegram", Metric: "out-p99-ms", Process: "process-out-p99-ms", Goal: 3, Max: true, Scale: 1, Unit: "ms"},
	{Name: "in + out: a warm turn's host overhead, p50", Bench: "BenchmarkOutboundTelegram", Metric: "inout-p50-ms", Process: "process-inout-p50-ms", Goal: 1.5, Max: true, Scale: 1, Unit: "ms"},
	{Name: "in + out: a warm turn's host overhead, p99", Bench: "BenchmarkOutboundTelegram", Metric: "inout-p99-ms", Process: "process-inout-p99-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "in: getUpdates → claude's stdin, real binary, p50", Bench: "BenchmarkOutboundTelegram", Metric: "in-p50-ms", Process: "process-in-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "host CPU per warm turn", Bench: "BenchmarkOutboundTelegram", Metric: "host-cpu-ms/turn", Process: "process-host-cpu-ms/turn", Goal: 3.4, Max: true, Scale: 1, Unit: "ms"},
	{Name: "Telegram plugin CPU per warm turn", Bench: "BenchmarkOutboundTelegram", Metric: "plugin-cpu-ms/turn", Info: true, Scale: 1, Unit: "ms"},
	// Each sleep and wake-up of a thread costs a virtual machine tens of
	// µs of CPU: most of a warm turn's (core/internal/procpace).
	{Name: "host context switches per warm turn", Bench: "BenchmarkOutboundTelegram", Metric: "host-switches/turn", Info: true, Scale: 1, Unit: ""},
	// The same turns with storage { durability = "process" } (no fsync)
	// and the default ("full") in alternate rounds of one run
	// (core/e2e/durability_bench_test.go): the PROCESS column of the rows
	// above, and here the default's figures of that run and what the
	// fsync costs. Issue 84 retired the goal "out at \"process\" ≤ 0.5 ms".
	{Name: "host CPU per warm turn, durability \"full\", same run", Bench: "BenchmarkOutboundDurability", Metric: "full-host-cpu-ms/turn", Info: true, Scale: 1, Unit: "ms"},
	{Name: "out, durability \"full\" (default: survives power loss too), same run, p50", Bench: "BenchmarkOutboundDurability", Metric: "full-out-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "what the fsync costs the reply: out full − process", Bench: "BenchmarkOutboundDurability", Metric: "fsync-out-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "what the fsyncs cost a warm turn: in + out full − process", Bench: "BenchmarkOutboundDurability", Metric: "fsync-inout-ms", Info: true, Scale: 1, Unit: "ms"},
	// The first turn of a chat, the one that starts claude (in its
	// sandbox), over 30 new chats (core/e2e/firstturn_bench_test.go).
	{Name: "first turn of a chat (starts claude): in + out, p50", Bench: "BenchmarkFirstTurnTelegram", Metric: "first-inout-p50-ms", Goal: 7, Max: true, Scale: 1, Unit: "ms"},
	{Name: "first turn of a chat: update → claude read the prompt, p50", Bench: "BenchmarkFirstTurnTelegram", Metric: "first-in-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "host CPU per first turn", Bench: "BenchmarkFirstTurnTelegram", Metric: "host-cpu-ms/first-turn", Info: true, Scale: 1, Unit: "ms"},
	{Name: "first turn: update → claude's process started (host work, exec, claude's start), p50", Bench: "BenchmarkFirstTurnTelegram", Metric: "first-proc-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	// The process hop: a host → plugin call to a real plugin process
	// (core/pluginhost), ~0.25 ms before issue 58; the loopback plugin
	// built from the tree, so on the call stream since then.
	{Name: "host → plugin call (loopback plugin), p50", Bench: "BenchmarkUnaryCall", Metric: "p50-µs", Goal: 150, Max: true, Scale: 1, Unit: "µs"},
	// The same hop unary and on the call stream in alternation, to one
	// plugin process (sdk/pluginclient/bench_test.go), with the host's Go
	// code on one processor as the daemon runs it while light
	// (core/internal/procpace), then on all (busy), then each call after
	// 10 ms of idle; beside them a bare Unix socket's round trip to an
	// echo process in the same alternation: the machine's floor under any
	// call between processes.
	{Name: "host → plugin call, stream, p50", Bench: "BenchmarkHostCall", Metric: "stream-p50-µs", Goal: 100, Max: true, Scale: 1, Unit: "µs"},
	{Name: "host → plugin call, unary (plugins without the stream), same run, p50", Bench: "BenchmarkHostCall", Metric: "unary-p50-µs", Info: true, Scale: 1, Unit: "µs"},
	{Name: "a bare Unix socket's round trip between two processes (the floor), same run, p50", Bench: "BenchmarkHostCall", Metric: "bare-p50-µs", Info: true, Scale: 1, Unit: "µs"},
	{Name: "host → plugin call, stream, the host on all processors (busy), p50", Bench: "BenchmarkHostCall", Metric: "stream-allprocs-p50-µs", Info: true, Scale: 1, Unit: "µs"},
	{Name: "a bare Unix socket's round trip, the host on all processors, p50", Bench: "BenchmarkHostCall", Metric: "bare-allprocs-p50-µs", Info: true, Scale: 1, Unit: "µs"},
	{Name: "host → plugin call, stream, each after 10 ms idle (spaced as turns), p50", Bench: "BenchmarkHostCall", Metric: "stream-idle-p50-µs", Info: true, Scale: 1, Unit: "µs"},
	{Name: "a bare Unix socket's round trip, each after 10 ms idle, p50", Bench: "BenchmarkHostCall", Metric: "bare-idle-p50-µs", Info: true, Scale: 1, Unit: "µs"},
	{Name: "host allocations per call, stream", Bench: "BenchmarkHostCall", Metric: "stream-allocs/call", Info: true, Scale: 1, Unit: ""},
	{Name: "host allocations per call, unary", Bench: "BenchmarkHostCall", Metric: "unary-allocs/call", Info: true, Scale: 1, Unit: ""},
	{Name: "first visible text: claude's first delta → the chat, p50", Bench: "BenchmarkFirstTextTelegram", Metric: "first-text-p50-ms", Goal: 250, Max: true, Scale: 1, Unit: "ms"},
	{Name: "first visible text, p90", Bench: "BenchmarkFirstTextTelegram", Metric: "first-text-p90-ms", Info: true, Scale: 1, Unit: "ms"},
	// Issue 42: a regression floor, every message fsync'd before its ack.
	{Name: "pipeline, no-op agent, 1,000 sessions, replies delivered", Bench: "BenchmarkPipeline", Metric: "msgs/s", Goal: 10000, Scale: 1, Unit: "msg/s"},
	{Name: "pipeline: SQL statements per message", Bench: "BenchmarkPipeline", Metric: "statements/msg", Info: true, Scale: 1, Unit: ""},
	{Name: "pipeline as above, 3.7 KB messages, 1.9 KB replies", Bench: "BenchmarkPipelineLong", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "journal accept alone (the ack)", Bench: "BenchmarkInboundAcceptOnly/sync=FULL", Metric: "ack-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	// The real binary's loads: the figures are shown, the ratio to the
	// echo bot is retired (it measured the harness).
	{Name: "real binary, 2,000 msgs / 200 chats", Bench: "BenchmarkLoadTelegram", Metric: "clawhost-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "real binary: messages lost", Bench: "BenchmarkLoadTelegram", Metric: "lost", Goal: 0, Max: true, Scale: 1, Unit: ""},
	{Name: "real binary: messages doubled", Bench: "BenchmarkLoadTelegram", Metric: "doubled", Goal: 0, Max: true, Scale: 1, Unit: ""},
	// The same load with a warm claude for every chat: the path without
	// the agent's starts.
	{Name: "real binary, warm claude for each chat", Bench: "BenchmarkLoadTelegramWarm", Metric: "clawhost-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "real binary, warm: messages lost", Bench: "BenchmarkLoadTelegramWarm", Metric: "lost", Goal: 0, Max: true, Scale: 1, Unit: ""},
	{Name: "real binary, warm: messages doubled", Bench: "BenchmarkLoadTelegramWarm", Metric: "doubled", Goal: 0, Max: true, Scale: 1, Unit: ""},
	// The same load at the warm budget the default warm_memory gives the
	// real CLI on this machine (28 processes on 23 GB; issue 84, goal 5).
	{Name: "real binary, warm budget of the real CLI", Bench: "BenchmarkLoadTelegramRealBudget", Metric: "clawhost-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "real binary, that budget's max_warm", Bench: "BenchmarkLoadTelegramRealBudget", Metric: "max_warm", Info: true, Scale: 1, Unit: ""},
	{Name: "real binary, real CLI budget: messages lost", Bench: "BenchmarkLoadTelegramRealBudget", Metric: "lost", Goal: 0, Max: true, Scale: 1, Unit: ""},
	{Name: "real binary, real CLI budget: messages doubled", Bench: "BenchmarkLoadTelegramRealBudget", Metric: "doubled", Goal: 0, Max: true, Scale: 1, Unit: ""},
	// Idle memory: what the machine cannot take back (anonymous memory of
	// /proc/PID/smaps_rollup) after 2 min 10 s idle; RSS beside it.
	{Name: "idle anonymous memory, host + Telegram", Bench: "BenchmarkIdleRSS", Metric: "host-tg-anon-MB", Goal: 6.3, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle anonymous memory, host + Telegram + web chat", Bench: "BenchmarkIdleRSS", Metric: "host-tg-web-anon-MB", Goal: 12, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle anonymous memory, Telegram plugin", Bench: "BenchmarkIdleRSS", Metric: "telegram-anon-MB", Goal: 2.5, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle anonymous memory, web chat plugin", Bench: "BenchmarkIdleRSS", Metric: "webchat-anon-MB", Goal: 2.5, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle anonymous memory, Discord plugin", Bench: "BenchmarkIdleRSS", Metric: "discord-anon-MB", Goal: 2.5, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle anonymous memory, WhatsApp plugin (linked)", Bench: "BenchmarkIdleRSS", Metric: "whatsapp-anon-MB", Goal: 8, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle anonymous memory, Slack plugin (Socket Mode)", Bench: "BenchmarkIdleRSS", Metric: "slack-anon-MB", Goal: 2.5, Max: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, host + Telegram + web chat", Bench: "BenchmarkIdleRSS", Metric: "total-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, host", Bench: "BenchmarkIdleRSS", Metric: "host-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, Telegram plugin", Bench: "BenchmarkIdleRSS", Metric: "telegram-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, web chat plugin", Bench: "BenchmarkIdleRSS", Metric: "webchat-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, Discord plugin", Bench: "BenchmarkIdleRSS", Metric: "discord-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, WhatsApp plugin (linked)", Bench: "BenchmarkIdleRSS", Metric: "whatsapp-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle RSS, Slack plugin (Socket Mode)", Bench: "BenchmarkIdleRSS", Metric: "slack-rss-MB", Info: true, Scale: 1, Unit: "MB"},
	{Name: "idle CPU, host + Telegram (tree)", Bench: "BenchmarkIdleRSS", Metric: "idle-cpu-ms/s", Goal: 0.5, Max: true, Scale: 1, Unit: "ms/s"},
	// What each feature costs the hot path: the same run with it off
	// (features=none) and on.
	{Name: "inbound → stdin p50, features off", Bench: "BenchmarkInboundToRun/features=none", Metric: "run-p50-ns", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "inbound → stdin p50, usage ledger", Bench: "BenchmarkInboundToRun/features=ledger", Metric: "run-p50-ns", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "inbound → stdin p50, prompt section", Bench: "BenchmarkInboundToRun/features=prompt", Metric: "run-p50-ns", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "inbound → stdin p50, agent resolution", Bench: "BenchmarkInboundToRun/features=agents", Metric: "run-p50-ns", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "inbound → stdin p50, turn card", Bench: "BenchmarkInboundToRun/features=card", Metric: "run-p50-ns", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "inbound → stdin p50, all four", Bench: "BenchmarkInboundToRun/features=all", Metric: "run-p50-ns", Info: true, Scale: 1e3, Unit: "µs"},
	// Issue 59: what a no-op lifecycle hook (answering at once) adds to a
	// warm turn's p50, against the same pipeline without it.
	{Name: "a no-op message_received hook: added to a warm turn, p50", Bench: "BenchmarkLifecycleHooks/hook=received", Metric: "added-p50-ns", Goal: 5e5, Max: true, Scale: 1e6, Unit: "ms"},
	{Name: "a no-op message_sending hook: added to a warm turn, p50", Bench: "BenchmarkLifecycleHooks/hook=sending", Metric: "added-p50-ns", Goal: 5e5, Max: true, Scale: 1e6, Unit: "ms"},
	// Issue 58: each feature's cost beside its goal, the pipeline with it
	// and without alternating message by message (BenchmarkFeatureCost).
	{Name: "the usage ledger: added to a warm turn, p50", Bench: "BenchmarkFeatureCost/feature=ledger", Metric: "added-p50-ns", Goal: 1e5, Max: true, Scale: 1e3, Unit: "µs"},
	{Name: "the messaging prompt section: added to a warm turn, p50", Bench: "BenchmarkFeatureCost/feature=prompt", Metric: "added-p50-ns", Goal: 1e5, Max: true, Scale: 1e3, Unit: "µs"},
	{Name: "agent resolution (3 agents): added to a warm turn, p50", Bench: "BenchmarkFeatureCost/feature=agents", Metric: "added-p50-ns", Goal: 1e5, Max: true, Scale: 1e3, Unit: "µs"},
	{Name: "the turn card: added to a warm turn, p50", Bench: "BenchmarkFeatureCost/feature=card", Metric: "added-p50-ns", Goal: 1e5, Max: true, Scale: 1e3, Unit: "µs"},
	{Name: "all four: added to a warm turn, p50", Bench: "BenchmarkFeatureCost/feature=all", Metric: "added-p50-ns", Goal: 2.5e5, Max: true, Scale: 1e3, Unit: "µs"},
	{Name: "pipeline, features off", Bench: "BenchmarkPipelineFeatures/features=none", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "pipeline, usage ledger", Bench: "BenchmarkPipelineFeatures/features=ledger", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "pipeline, prompt section", Bench: "BenchmarkPipelineFeatures/features=prompt", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "pipeline, agent resolution", Bench: "BenchmarkPipelineFeatures/features=agents", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "pipeline, turn card", Bench: "BenchmarkPipelineFeatures/features=card", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "pipeline, all four", Bench: "BenchmarkPipelineFeatures/features=all", Metric: "msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "200 chats, max_warm 4, a turn every 40 ms: latency p50", Bench: "BenchmarkManyChats/every=40ms", Metric: "turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "200 chats, max_warm 4, a turn every 40 ms: latency p99", Bench: "BenchmarkManyChats/every=40ms", Metric: "turn-p99-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "200 chats, max_warm 4, a turn every 40 ms: claude starts per turn", Bench: "BenchmarkManyChats/every=40ms", Metric: "starts/turn", Info: true, Scale: 1, Unit: ""},
	{Name: "1 agent × 300 chats, max_warm 12 (agents=3's traffic), a turn every 40 ms: latency p50", Bench: "BenchmarkManyChats/agents=1", Metric: "turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "1 agent × 300 chats, max_warm 12 (agents=3's traffic), a turn every 40 ms: latency p99", Bench: "BenchmarkManyChats/agents=1", Metric: "turn-p99-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "1 agent × 300 chats, max_warm 12 (agents=3's traffic), a turn every 40 ms: starts per turn", Bench: "BenchmarkManyChats/agents=1", Metric: "starts/turn", Info: true, Scale: 1, Unit: ""},
	{Name: "3 agents × 100 chats, max_warm 4 each, a turn every 40 ms: latency p50", Bench: "BenchmarkManyChats/agents=3", Metric: "turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "3 agents × 100 chats, max_warm 4 each, a turn every 40 ms: latency p99", Bench: "BenchmarkManyChats/agents=3", Metric: "turn-p99-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "3 agents × 100 chats, max_warm 4 each, a turn every 40 ms: starts per turn", Bench: "BenchmarkManyChats/agents=3", Metric: "starts/turn", Info: true, Scale: 1, Unit: ""},
	{Name: "200 chats, max_warm 4, a turn every 25 ms (overload): latency p50", Bench: "BenchmarkManyChats/every=25ms", Metric: "turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "200 chats, max_warm 4, a turn every 25 ms (overload): latency p99", Bench: "BenchmarkManyChats/every=25ms", Metric: "turn-p99-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "200 chats, max_warm 4, a turn every 25 ms (overload): starts per turn", Bench: "BenchmarkManyChats/every=25ms", Metric: "starts/turn", Info: true, Scale: 1, Unit: ""},
	// Issue 58: warm claude processes by memory. 50 chats, Zipf-like
	// activity, a 2 GB warm_memory budget (processes counted at 210 MB)
	// beside every chat kept warm, in one interleaved run: the time to
	// claude's first text for a returning chat.
	{Name: "returning chat, first answer p50, warm_memory 2 GB ÷ all warm", Bench: "BenchmarkWarmMemory", Metric: "p50-ratio", Goal: 1.2, Max: true, Scale: 1, Unit: "×"},
	{Name: "returning chat, first answer p50, warm_memory 2 GB", Bench: "BenchmarkWarmMemory", Metric: "budget-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "returning chat, first answer p50, all warm", Bench: "BenchmarkWarmMemory", Metric: "allwarm-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "returning chat, first answer p50 on a warm process (2 GB)", Bench: "BenchmarkWarmMemory", Metric: "budget-warm-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "returning chat, first answer p50 starting claude (2 GB)", Bench: "BenchmarkWarmMemory", Metric: "budget-cold-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "returning chats answered warm (2 GB)", Bench: "BenchmarkWarmMemory", Metric: "warm-share", Info: true, Scale: 0.01, Unit: "%"},
	// Issue 84, goal 2: a new session's first answer as fast as a warm
	// turn's. The real CLI against the fake API, agent.spare on (sandbox off:
	// a new chat adopts the spare), interleaved: Run → claude's first text.
	{Name: "new session, first answer p50 on the agent's spare ÷ a warm turn's", Bench: "BenchmarkNewSessionSpare", Metric: "spare-ratio", Goal: 1.3, Max: true, Scale: 1, Unit: "×"},
	{Name: "new session, first answer p50 on the agent's spare (real CLI)", Bench: "BenchmarkNewSessionSpare", Metric: "spare-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "warm turn, first answer p50 (real CLI)", Bench: "BenchmarkNewSessionSpare", Metric: "warm-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "returning evicted chat, first answer p50 (real CLI, resumes)", Bench: "BenchmarkNewSessionSpare", Metric: "evicted-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "new session without a spare, first answer p50 (real CLI)", Bench: "BenchmarkNewSessionSpare", Metric: "coldnew-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "one claude: a new session's first prompt (after /clear) ÷ a second prompt, p50", Bench: "BenchmarkSessionFirstPrompt", Metric: "session-first-ratio", Info: true, Scale: 1, Unit: "×"},
	{Name: "one claude: the process's first prompt, p50 (real CLI)", Bench: "BenchmarkSessionFirstPrompt", Metric: "process-first-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "one claude: a second prompt, p50", Bench: "BenchmarkSessionFirstPrompt", Metric: "second-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "one claude: a new session's first prompt after /clear, p50", Bench: "BenchmarkSessionFirstPrompt", Metric: "session-first-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	// Measured at ecd61e0, before this work: the goal is "unchanged or
	// better".
	{Name: "host RSS added by 10,000 stored sessions", Bench: "BenchmarkGatewaySessionsRSS", Metric: "rss-delta-MB", Goal: sessionsRSSBefore, Max: true, Scale: 1, Unit: "MB"},
	{Name: "Go heap added by 10,000 stored sessions", Bench: "BenchmarkGatewaySessionsRSS", Metric: "heap-delta-MB", Info: true, Scale: 1, Unit: "MB"},
	// What the usage ledger costs a turn: the reply's commit without and
	// with the turn's row in the same transaction (one fsync either way).
	{Name: "sandboxed start, host's work before exec, shared claude config", Bench: "BenchmarkSandboxStart/shared-config/prepare", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "sandboxed start, host's work before exec, each chat's own claude state", Bench: "BenchmarkSandboxStart/chat-state/prepare", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "sandboxed start: bwrap running /bin/true, shared claude config", Bench: "BenchmarkSandboxStart/shared-config/exec", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "sandboxed start: bwrap running /bin/true, each chat's own claude state", Bench: "BenchmarkSandboxStart/chat-state/exec", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	// Per-chat sandbox state against the shared config, from the two
	// rows above (run one after the other: information, not a goal).
	{Name: "per-chat sandbox state: added to the host's work before exec", Bench: "BenchmarkSandboxStart/chat-state/prepare", Base: "BenchmarkSandboxStart/shared-config/prepare", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "per-chat sandbox state: added to a sandboxed exec", Bench: "BenchmarkSandboxStart/chat-state/exec", Base: "BenchmarkSandboxStart/shared-config/exec", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "sandboxed start: /bin/true without bwrap (the floor)", Bench: "BenchmarkSandboxStart/exec/plain", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "sandboxed start: + bwrap's process, mount namespace and root", Bench: "BenchmarkSandboxStart/exec/bwrap", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "sandboxed start: + the pid namespace and its init", Bench: "BenchmarkSandboxStart/exec/pid", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "sandboxed start: + its own /dev and /proc", Bench: "BenchmarkSandboxStart/exec/dev-proc", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "sandboxed start: mounts beyond bwrap's root, each chat's own state", Bench: "BenchmarkSandboxStart/chat-state/exec", Metric: "mounts", Info: true, Scale: 1, Unit: ""},
	// One sandbox, many starts (the prototype of the sandbox helper: core/sandbox/zygote_bench_test.go):
	// a start inside one long-lived bwrap, with the chat's mount list made per start,
	// beside bwrap per start, each beyond a plain start of /bin/true in the same run.
	{Name: "one sandbox, many starts (prototype): a start with the chat's mounts, beyond /bin/true's", Bench: "BenchmarkSandboxZygote/zygote-mounts", Base: "BenchmarkSandboxZygote/plain", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	{Name: "one sandbox, many starts (prototype): its CPU beyond /bin/true's", Bench: "BenchmarkSandboxZygote/zygote-mounts", Base: "BenchmarkSandboxZygote/plain", Metric: "cpu-us/start", Info: true, Scale: 1e3, Unit: "ms"},
	{Name: "one sandbox, many starts: bwrap per start with the same mounts, beyond /bin/true's", Bench: "BenchmarkSandboxZygote/bwrap-per-start", Base: "BenchmarkSandboxZygote/plain", Metric: "ns/op", Info: true, Scale: 1e6, Unit: "ms"},
	// Issue 58: the sandbox's cost end to end, sandbox = "off" beside
	// bubblewrap in one run (core/e2e/sandbox_bench_test.go):
	//   make build && go test ./core/e2e -run '^$' -bench 'LoadTelegramSandbox|FirstTurnSandbox' -benchtime 1x
	// "sandboxed" is bubblewrap per start (CLAWHOST_SANDBOX_HELPER=0): since
	// 2026-11-26 only the fallback where recycled sandboxes do not work, as
	// root or not; the goals are the recycled rows below, what every host gets.
	{Name: "2,000 msgs / 200 chats, bubblewrap per start ÷ sandbox = \"off\" (same run)", Bench: "BenchmarkLoadTelegramSandbox", Metric: "sandboxed-ratio-%", Info: true, Scale: 100, Unit: ""},
	{Name: "2,000 msgs / 200 chats, sandbox = \"off\"", Bench: "BenchmarkLoadTelegramSandbox", Metric: "off-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "2,000 msgs / 200 chats, sandboxed", Bench: "BenchmarkLoadTelegramSandbox", Metric: "sandboxed-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "first turn of a chat (starts claude), bubblewrap per start − sandbox = \"off\", p50", Bench: "BenchmarkFirstTurnSandbox", Metric: "first-turn-delta-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "first turn of a chat: update → claude's stdin, sandbox = \"off\", p50", Bench: "BenchmarkFirstTurnSandbox", Metric: "off-first-turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	{Name: "first turn of a chat: update → claude's stdin, sandboxed, p50", Bench: "BenchmarkFirstTurnSandbox", Metric: "sandboxed-first-turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	// The same with recycled sandboxes (the sandbox helper: the default, as root and as any
	// other user), in the same runs.
	{Name: "2,000 msgs / 200 chats, recycled sandboxes ÷ sandbox = \"off\" (same run)", Bench: "BenchmarkLoadTelegramSandbox", Metric: "recycled-ratio-%", Goal: 90, Scale: 100, Unit: ""},
	{Name: "2,000 msgs / 200 chats, recycled sandboxes", Bench: "BenchmarkLoadTelegramSandbox", Metric: "recycled-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "first turn of a chat, recycled sandbox − sandbox = \"off\", p50", Bench: "BenchmarkFirstTurnSandbox", Metric: "recycled-first-turn-delta-ms", Goal: 2, Max: true, Scale: 1, Unit: "ms"},
	{Name: "first turn of a chat: update → claude's stdin, recycled sandbox, p50", Bench: "BenchmarkFirstTurnSandbox", Metric: "recycled-first-turn-p50-ms", Info: true, Scale: 1, Unit: "ms"},
	// The runner's part of it, without the host (core/runner BenchmarkRecycledTurns: 200
	// turns each starting a fake claude, off / bwrap per start / recycled interleaved).
	{Name: "runner, 200 claude starts: bwrap per start ÷ sandbox = \"off\" (same run)", Bench: "BenchmarkRecycledTurns", Metric: "per-start-ratio-%", Info: true, Scale: 100, Unit: ""},
	{Name: "runner, 200 claude starts: recycled sandboxes ÷ sandbox = \"off\" (same run)", Bench: "BenchmarkRecycledTurns", Metric: "recycled-ratio-%", Info: true, Scale: 100, Unit: ""},
	// The sandbox helper alone (core/sandbox BenchmarkZygoteHelperCPU: starts of /bin/true
	// with a direct chat's mounts, one after the other).
	{Name: "sandbox helper: its CPU per start", Bench: "BenchmarkZygoteHelperCPU", Metric: "helper-cpu-us/start", Info: true, Scale: 1, Unit: "µs"},
	{Name: "sandbox helper: a start's wait (request → claude's pid), p50", Bench: "BenchmarkZygoteHelperCPU", Metric: "start-p50-us", Info: true, Scale: 1, Unit: "µs"},
	// What confining claude adds to a recycled start (BenchmarkZygoteConfine: the shipped
	// helper, and the test helper with and without the syscall filter, Landlock and the
	// keyring; the start through the helper's binary and its user namespace stay in both).
	{Name: "sandbox helper (shipped): a start's wait, p50", Bench: "BenchmarkZygoteConfine/shipped", Metric: "start-p50-us", Info: true, Scale: 1, Unit: "µs"},
	{Name: "the filter, Landlock and the keyring: added to a start's wait", Bench: "BenchmarkZygoteConfine/test-helper", Base: "BenchmarkZygoteConfine/test-helper-no-filter-landlock-keyring", Metric: "start-p50-us", Info: true, Scale: 1, Unit: "µs"},
	{Name: "RecordReply, one chunk (sync=FULL)", Bench: "BenchmarkRecordReplyLedger/usage=false", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "RecordReply with the turn's usage ledger row", Bench: "BenchmarkRecordReplyLedger/usage=true", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	{Name: "the usage ledger row: added to RecordReply", Bench: "BenchmarkRecordReplyLedger/usage=true", Base: "BenchmarkRecordReplyLedger/usage=false", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	// Several hosts: the session's host checks once per message that no
	// older message of the chat is still out of its hands (OlderOpen).
	{Name: "cluster ordering check (OlderOpen), one read", Bench: "BenchmarkOlderOpen", Metric: "ns/op", Info: true, Scale: 1e3, Unit: "µs"},
	// The same check under BenchmarkClusterLoad (3 hosts, one PostgreSQL):
	// how often it runs, its time and its share of the database's
	// transactions, per message, beside the load's throughput.
	{Name: "cluster load, 3 hosts on PostgreSQL", Bench: "BenchmarkClusterLoad", Metric: "postgres-3-msgs/s", Info: true, Scale: 1, Unit: "msg/s"},
	{Name: "cluster load, 3 hosts: ordering checks per message", Bench: "BenchmarkClusterLoad", Metric: "postgres-3-order-checks/msg", Info: true, Scale: 1, Unit: ""},
	{Name: "cluster load, 3 hosts: ordering check time per message (wall, with the connection pool's wait)", Bench: "BenchmarkClusterLoad", Metric: "postgres-3-order-check-us/msg", Info: true, Scale: 1e3, Unit: "ms"},
	{Name: "cluster load, 3 hosts: ordering checks' share of the database's transactions", Bench: "BenchmarkClusterLoad", Metric: "postgres-3-order-check-xacts-%", Info: true, Scale: 1, Unit: "%"},
	{Name: "exec → first Telegram long poll, p50", Bench: "BenchmarkStartupTelegram", Metric: "p50-first-poll-ms", Goal: 50, Max: true, Scale: 1, Unit: "ms"},
	{Name: "exec → every plugin ready, p50", Bench: "BenchmarkStartupTelegram", Metric: "p50-ready-ms", Goal: 50, Max: true, Scale: 1, Unit: "ms"},
}

// processBench is the benchmark that measures the turn rows at storage {
// durability = "process" } (Process).
const processBench = "BenchmarkOutboundDurability"

// processValue is f's PROCESS column: the median of its Process metric in
// res, "—" when f has none or it did not run.
func processValue(f figure, res map[string]map[string][]float64) string {
	v := res[processBench][f.Process]
	if f.Process == "" || len(v) == 0 {
		return "—"
	}
	return num(median(v)/f.Scale, f.Unit)
}

// sessionsRSSBefore is BenchmarkGatewaySessionsRSS's rss-delta-MB before
// the performance work: the median of 3 at ecd61e0 (16.2, 5.8, 7.6 MB) plus
// 10% for noise.
const sessionsRSSBefore = 8.4

// benchLine matches a result line: name, iterations, then value/unit
// pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse collects every value each benchmark reported per metric.
func parse(r io.Reader) (map[string]map[string][]float64, error) {
	out := map[string]map[string][]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if out[m[1]] == nil {
				out[m[1]] = map[string][]float64{}
			}
			out[m[1]][f[i+1]] = append(out[m[1]][f[i+1]], v)
		}
	}
	return out, sc.Err()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// report writes the table and returns how many judged figures failed and
// how many were judged.
func report(w io.Writer, res map[string]map[string][]float64) (failed, judged int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tGOAL\tVALUE\tPROCESS\tRESULT")
	for _, f := range figures {
		goal := "—"
		if !f.Info {
			op := "≥"
			if f.Max {
				op = "≤"
			}
			goal = op + " " + num(f.Goal/f.Scale, f.Unit)
		}
		vals := res[f.Bench][f.Metric]
		base := res[f.Base][f.Metric]
		if len(vals) == 0 || f.Base != "" && len(base) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Name, goal, "—", processValue(f, res), "not run")
			continue
		}
		v := median(vals)
		if f.Base != "" {
			v -= median(base)
		}
		verdict := "info"
		if !f.Info {
			judged++
			ok := v >= f.Goal
			if f.Max {
				ok = v <= f.Goal
			}
			verdict = "pass"
			if !ok {
				verdict = "FAIL"
				failed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Name, goal, num(v/f.Scale, f.Unit), processValue(f, res), verdict)
	}
	tw.Flush()
	return failed, judged
}

// reportBeside writes the table of figs, the tree's results res beside
// the base build's (named name), and returns how many of the tree's judged
// figures failed and how many were judged. CHANGE is the tree's median
// against the base's, in percent; "—" where either did not run. A figure
// whose benchmark function is in changed (its code differs between the
// builds, see changedBenchmarks) has its CHANGE marked with "*", and a
// note under the table says what the mark means.
func reportBeside(w io.Writer, figs []figure, base, res map[string]map[string][]float64, name string, changed map[string]bool) (failed, judged int) {
	marked := false
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FIGURE\tGOAL\t%s\tTREE\tCHANGE\t%s PROCESS\tTREE PROCESS\tRESULT\n", strings.ToUpper(name), strings.ToUpper(name))
	for _, f := range figs {
		goal := "—"
		if !f.Info {
			op := "≥"
			if f.Max {
				op = "≤"
			}
			goal = op + " " + num(f.Goal/f.Scale, f.Unit)
		}
		bv, tv := base[f.Bench][f.Metric], res[f.Bench][f.Metric]
		bs, ts, change, verdict := "—", "—", "—", "not run"
		var b, t float64
		if len(bv) > 0 {
			b = median(bv)
			bs = num(b/f.Scale, f.Unit)
		}
		if len(tv) > 0 {
			t = median(tv)
			ts = num(t/f.Scale, f.Unit)
			verdict = "info"
			if !f.Info {
				judged++
				verdict = "pass"
				if !meets(f, t) {
					verdict = "FAIL"
					failed++
				}
			}
		}
		if len(bv) > 0 && len(tv) > 0 {
			change = percent(b, t)
			if changed[f.benchFunc()] {
				change += " *"
				marked = true
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, goal, bs, ts, change, processValue(f, base), processValue(f, res), verdict)
	}
	tw.Flush()
	if marked {
		fmt.Fprintf(w, "\n* the benchmark's own code differs between %s and the tree: the change is partly the measurement's\n", name)
	}
	return failed, judged
}

// meets reports whether v keeps f's goal.
func meets(f figure, v float64) bool {
	if f.Max {
		return v <= f.Goal
	}
	return v >= f.Goal
}

// percent is the change from b to t: "+12%", "-3%", "0%"; "—" when b is 0
// and t is not (no ratio).
func percent(b, t float64) string {
	switch {
	case b == t:
		return "0%"
	case b == 0:
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", (t-b)/max(b, -b)*100)
}

// num formats a value with its unit and a precision that suits its size.
func num(v float64, unit string) string {
	var s string
	switch a := max(v, -v); {
	case a == 0 || a >= 100:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if unit == "" {
		return s
	}
	return s + " " + unit
}

func main() {
	basePath := flag.String("base", "", "the output of the same benchmarks on an earlier build: shown beside the tree's")
	baseName := flag.String("base-name", "base", "what the earlier build is (a tag or a commit), the column's title")
	baseRev := flag.String("base-rev", "", "the earlier build's revision in this repository: figures whose benchmark's code differs from the tree's are marked")
	flag.Parse()
	res, err := parseFiles(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(2)
	}
	var failed, judged int
	if *basePath != "" {
		base, err := parseFiles([]string{*basePath})
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(2)
		}
		var changed map[string]bool
		if *baseRev != "" {
			if changed, err = changedBenchmarks(".", *baseRev, benchNames(figures)); err != nil {
				fmt.Fprintln(os.Stderr, "benchreport: comparing the benchmarks' code:", err)
			}
		}
		failed, judged = reportBeside(os.Stdout, figures, base, res, *baseName, changed)
	} else {
		failed, judged = report(os.Stdout, res)
	}
	fmt.Printf("\n%d of %d goals met (medians; figures not run are not counted)\n", judged-failed, judged)
}

// benchFunc is the benchmark function f is measured by: its Bench without
// a sub-benchmark's name.
func (f figure) benchFunc() string {
	fn, _, _ := strings.Cut(f.Bench, "/")
	return fn
}

// benchNames are the benchmark functions figs are measured by, each once.
func benchNames(figs []figure) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range figs {
		if fn := f.benchFunc(); !seen[fn] {
			seen[fn] = true
			names = append(names, fn)
		}
	}
	return names
}

// parseFiles parses the files named, or standard input when none is.
func parseFiles(paths []string) (map[string]map[string][]float64, error) {
	if len(paths) == 0 {
		return parse(os.Stdin)
	}
	var rs []io.Reader
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		rs = append(rs, f)
	}
	return parse(io.MultiReader(rs...))
}
