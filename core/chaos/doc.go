// Package chaos is clawhost's chaos campaign: the proof, shipped with the
// project, that the exactly-once mechanisms hold when processes die and
// the outside world misbehaves. It has no code of its own outside its
// tests (the harness is test-only, so the core never imports a plugin's
// fake): `make chaos` runs the long campaign, and TestChaosShort, a few
// trials with a fixed seed, runs in `make test` so a regression fails CI.
//
// # What runs
//
// The real clawhost binary runs the real clawhost-telegram plugin process
// against the project's fake Bot API (plugins/telegram/telegramtest, in
// the test process, on loopback), with the test binary as a fake claude
// CLI (core/internal/fakeclaude). Four Telegram DM chats send messages;
// each message asks the fake claude for a reply of one to three parts
// ("mark <id> part <i>/<n> …"), which a small text_limit puts in one
// chunk each, after a random think time, sometimes starting a tool (a
// `sleep 300` in claude's process group). Streaming is the default
// ("auto": a live draft edited into the reply).
//
// Every scenario starts its own host on a fresh data directory and runs
// trials. A trial: two to four chats send one to three messages each at
// random gaps; at a random moment the scenario's fault strikes:
//
//   - host-kill9, host-sigterm: the host gets SIGKILL or SIGTERM; once it
//     is gone the trial checks that nothing of its process tree survived,
//     then starts it again on the same directory;
//   - sending-hook-kill9: host-kill9 with a message_sending hook (the
//     exec-hook example) shaping every reply, streaming off; the tally
//     also fails any reply the chat shows unshaped (what the hook
//     returned is what is recorded and sent, across the kills);
//   - plugin-kill9: the telegram plugin gets SIGKILL (the host restarts it;
//     every fifth trial starts on a freshly restarted host, so the host's
//     crash-loop backoff, which reaches 30 s after ten quick crashes, does
//     not turn every later trial into a 30 s wait);
//   - slack-plugin-kill9: the same with the clawhost-slack plugin over
//     Socket Mode against the fake Slack (plugins/slack/slacktest), the
//     chats four members' DMs; in half the trials the fake loses the
//     plugin's acknowledgements before the kill, so envelopes the host
//     stored come again (platform_test.go is the seam); slack-host-kill9
//     kills the host instead;
//   - tools-host-kill9: host-kill9 while claude calls send_file (a file
//     named after the message, written in its workspace) and react in
//     most turns, before it thinks: the fake claude starts the MCP
//     server the host's --mcp-config names and calls the tools over
//     MCP, as claude does;
//   - plugin-tool-kill9: host-kill9 while claude calls a plugin tool with
//     a side effect in most turns, before it thinks: the whoami-tool
//     example's note (a line with the message's mark in the workspace's
//     notes.txt), granted with agent { tools }, over MCP as above;
//   - turn-card-kill9: every turn runs past the turn card's delay; once
//     a card with its Stop button shows, the host gets SIGKILL within
//     the next card tick or two (between the card's last edit and the
//     answer);
//   - usage-limit-kill9: claude's usage limit (the fake answers as
//     claude does at a subscription's limit, a rejected rate_limit_event
//     and a 429 result) holds for 3–5 s; the host parks what it refused
//     and gets SIGKILL while the turns are parked or just as the reset
//     releases them;
//   - claude-kill9: one claude process gets SIGKILL;
//   - api-drop, api-malformed, api-5xx, api-429, api-silence, api-timeout:
//     the fake Bot API carries one or two calls out (sendMessage,
//     editMessageText or getUpdates) and loses the answer (connection
//     dropped, a 200 that is not JSON, silence until the client gives up),
//     or refuses them (500/502/503, 429 with retry_after), or answers them
//     after a silence of several seconds;
//   - store-locked: another connection holds the database with BEGIN
//     EXCLUSIVE for a few seconds;
//   - disk-full: the data directory is a small tmpfs, filled up for a few
//     seconds (needs root and mount(8); skipped, and said so, otherwise);
//   - cluster-*: three hosts on one throwaway PostgreSQL (cluster_test.go)
//     serving the one bot; kill -9 of the poller or of a host that only runs
//     turns, or SIGTERM of any host, at 2 s leases; cluster-kill9-storm and
//     cluster-sigterm-storm strike any host with kill -9 or SIGTERM every
//     trial at the default lease_ttl (5 s), the failover campaign of issue
//     85.
//
// The trial then waits until every message it sent is settled: its
// journal entry is finished (done, failed or dropped). Recovery time is
// from the restart's exec (host faults), the kill (plugin, claude) or the
// end of the fault (API and store faults) to the moment every message of
// the trial was settled (near zero when they all were before it: a
// SIGTERMed host finishes or hands back its work first). A message not
// settled within two minutes stays
// unsettled (noted); it is judged like every other message in the end.
//
// # What is counted, per message
//
// At the end of a scenario the host is stopped and every message is
// judged from three records: what the fake Bot API shows in the chat in
// the end (each bot message with its last content, after edits), the
// journal (the entry's state, attempts, uncertain chunks and reply text,
// read from the SQLite file), and the fake claude's run log (every turn
// start and every result written, with the message ids of the prompt).
//
//   - answered 1: every part of the reply is shown by exactly one bot
//     message of the chat.
//   - doubled: a part is shown by two or more bot messages — unless the
//     turn ran twice and the chat shows the notice that the reply starts
//     again ("restart told"; the earlier run's draft could not be taken
//     over, and the user was told so), or the chat shows the note that
//     a cut-off copy of the reply may show above (a draft's first send
//     lost its answer, so the reply could not be edited into it).
//   - uncertain told: a part is shown by no message, the journal marked
//     one of the reply's chunks uncertain (a send whose answer was lost:
//     at most once, never retried blindly) and the chat shows the notice
//     that part of a reply may be missing. Each such notice excuses one
//     message of its chat.
//   - other told: a part is shown by no message and the chat shows what
//     the host said instead: the agent's error notice (claude was killed
//     mid-turn: "The assistant stopped unexpectedly…", the reply the
//     journal recorded), or the notice of a reply that could not be
//     delivered, of a message interrupted twice, or of a stale reply.
//     Also counted here: "restart told" above.
//   - lost: anything else with a part shown by no message (including a
//     message the journal never stored, or one never settled).
//   - runs ×2: messages whose turn claude started more than once (a run
//     interrupted by a host kill is run again, at most once).
//   - given up, ran twice: messages failed as interrupted ("the gateway
//     restarted twice"), and those of them whose prompt the fake claude
//     read at least twice (its run log's turn starts, logged when it read
//     the prompt). A launch killed before claude read the prompt is no
//     run: the two must be equal, else the scenario fails.
//   - false notices: "may be missing" notices that excuse no message with
//     a missing part. A kill -9 may leave some (a send that arrived whose
//     answer was lost); the scenarios of graceful stops fail on any.
//   - finished re-run: a turn started again after an earlier run of it had
//     written its result, unless the host was SIGKILLed after that run
//     started (the one window the journal's contract admits: a crash
//     before the reply was committed; claude may write its result a few
//     milliseconds after the host died, to nobody), or after the journal
//     had recorded the reply. A failure.
//   - charged ×2: messages whose turn has more than one row in the usage
//     ledger (read from the journal's database), or one row of at least
//     1.5 times the turn's true cost. The ledger row is written in the
//     transaction that records the reply, so a crash can neither drop it
//     nor write it again. A failure.
//   - cost off: any other message whose ledger cost is not its turn's
//     true cost: each message asks the fake claude for a known cost
//     (#cost, reported as claude 2.1.330 reports a turn's own), the
//     true cost when the journal recorded claude's reply (the mark in
//     it), else 0 (claude killed: nobody reported a cost). A failure;
//     the campaign prints the ledger's total beside the true one.
//   - files and reactions (tools-host-kill9): a file the chat shows more
//     than once, or a reaction set more often than claude ran, makes the
//     message doubled; a file or reaction missing from a reply claude
//     gave that the chat shows makes it lost.
//   - done ×2 (plugin-tool-kill9): a message whose note the plugin wrote
//     more than once — the re-run of a killed turn called the tool again
//     instead of getting its stored result. A failure. A note missing
//     from a reply claude gave that the chat shows makes it lost.
//   - stop left: bot messages whose last state still has a turn card's
//     Stop button after the final stop (any Telegram scenario). A
//     failure.
//   - orphans: a process of the scenario (one whose environment carries
//     the scenario's HOME, which the host, the plugins, claude and claude's
//     tools inherit, or one in the process group of a claude process) that
//     is alive while the host is dead (checked for five seconds after
//     every host kill and after the final stop), or
//     that is no descendant of the running host (checked after every
//     trial). A failure.
//   - unfinished: a message whose journal entry is still open (accepted,
//     queued, processing or replied) after the host's final stop, whatever
//     the chat shows: the journal and the chat disagree, and the next start
//     would resume it. A failure.
//
// The campaign prints one table (scenario, trials, messages, answered 1,
// lost, doubled, uncertain told, other told, runs ×2, finished re-run,
// charged ×2, cost off, stop left, orphans, unfinished, recovery median
// and max) and fails on any lost or doubled message, finished re-run,
// turn charged twice or wrongly, Stop button left, orphan or unfinished
// entry.
//
// # Reproducing
//
// Every random choice (chats, message counts and gaps, think times, parts,
// tools, the fault's moment and kind) comes from a PCG seeded with
// -chaos.seed and the scenario's name, drawn before the trial runs, so a
// seed replays the same plan (the processes' own timing, of course, is
// the machine's). `make chaos` prints the seed; rerun with
//
//	make chaos CHAOS_ARGS='-chaos.seed=<seed> -chaos.only=host-kill9'
//
// -chaos.trials overrides trials per scenario ("host-kill9=100,api-drop=5"),
// -chaos.budget bounds the wall-clock time (shared among the scenarios by
// their trials: each starts no trial after its share, so a short budget
// runs fewer trials of every scenario, and the table says how many) and
// -chaos.keep keeps the scenarios' directories (host logs, run logs,
// databases) for a look afterwards, and -chaos.sandbox runs claude
// sandboxed (agent.sandbox = "auto", the run log's directory in add_dirs)
// instead of "off": recycled sandboxes where they work, bubblewrap per start
// with CLAWHOST_SANDBOX_HELPER=0 in the environment.
package chaos
