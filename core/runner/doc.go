// Package runner runs turns of Claude Code sessions by driving the claude CLI.
//
// Contract: Run starts a turn and returns at once with a Turn whose Events yield assistant
// text, tool progress and, last, the Result. Turns of one conversation key run one at a
// time in Run order (two claude processes on one session lose a turn); Config.MaxConcurrent
// caps turns across keys. Success is claude's is_error == false; failures carry a stable
// ErrorKind and a short user-visible notice (see Error). Abort, the caller's context and
// Config.Timeout end a turn early with the partial text; Steer adds a user message to a
// running turn (OpenClaw's "steer" queue mode; see its doc for what claude does with it).
//
// A session (a Claude conversation, named by a uuid) gets a warm process:
//
//	claude -p --output-format stream-json --verbose --input-format stream-json \
//	       (--session-id <uuid> | --resume <uuid>) [flags from Config]
//
// and every turn writes one {"type":"user","message":{"role":"user","content":...}} line
// to its stdin; history stays inside the process. The process is stopped after
// Config.IdleTimeout without turns, or when the warm processes hold more than
// Config.WarmMemory or number more than Config.MaxWarm (the least worth keeping first,
// see below). The next turn of a session without a live
// process resumes it with --resume. With Config.OneShot every turn starts a process, writes the prompt to
// stdin and closes it. Prompts never appear in argv; each process has its own TMPDIR under
// Config.StateDir and the workspace as cwd, runs in its own process group (so Abort kills
// tools it started) and, on Linux, dies with the host (Pdeathsig SIGKILL).
//
// Environment: claude does not inherit the host's environment, which holds the host's
// secrets (TELEGRAM_BOT_TOKEN and the like) that the model's tools could otherwise read.
// It gets PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM and TZ; claude's own settings
// when the host has them (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, ANTHROPIC_BASE_URL,
// the ANTHROPIC_*MODEL variables, CLAUDE_CONFIG_DIR, the proxy variables,
// NODE_EXTRA_CA_CERTS, IS_SANDBOX — the list and the reason for each are at claudeEnv);
// the runner's settings (its private TMPDIR, the variables that keep claude from any
// traffic but the API, CLAUDE_CODE_MAX_RETRIES); CLAUDE_CONFIG_DIR = Config.ConfigDir when
// set; with Config.RunAs that user's HOME, USER and LOGNAME; and Config.Env (agent.env),
// which overrides all but TMPDIR. Anything else claude or its tools need goes in agent.env.
// In the sandbox bwrap adds PWD (the workspace).
//
// Whose settings: claude runs under the bot's settings, not the operator's. Every process
// gets --permission-mode (Config.PermissionMode, else "default"), --setting-sources project
// (or user,project,local with Config.Settings = SettingsUser) and --strict-mcp-config, so a
// defaultMode, allow rule, hook or MCP server in the operator's ~/.claude/settings.json
// never applies silently (an allow rule Bash(env:*) there ran `env` unasked before).
// Config.ConfigDir (the composition's <data_dir>/claude) is claude's CLAUDE_CONFIG_DIR.
// Observed with claude 2.1.330 (HOME and CLAUDE_CONFIG_DIR pointed at empty directories,
// one turn): everything claude wrote went under CLAUDE_CONFIG_DIR — .claude.json (which
// otherwise is ~/.claude.json: account, MCP servers, project trust) and its backups/,
// projects/<cwd>/<session>.jsonl (the transcripts --resume reads), sessions/, plugins/ —
// and nothing under HOME. The CLI resolves settings.json (the "user" setting source) and
// .credentials.json (the login /login stores on Linux) in the same directory
// ("$CLAUDE_CONFIG_DIR or ~/.claude"). Not moved: managed settings
// (/etc/claude-code/managed-settings.json) apply whatever --setting-sources says, and
// .device-keys.json is resolved under ~/.claude. So the bot logs in either with
// ANTHROPIC_API_KEY in agent.env, or once by hand: `CLAUDE_CONFIG_DIR=<data_dir>/claude
// claude`, then /login. Without either claude answers "Not logged in · Please run /login";
// the turn's Error.Detail then says which directory has no credentials and both fixes.
//
// Plans (permission.go): any turn may ask for --permission-mode plan (TurnRequest.PermissionMode
// = PlanMode, /plan). claude 2.1.330 writes its plan under CLAUDE_CONFIG_DIR/plans and asks to
// leave plan mode with ExitPlanMode, whose input is that file's text. Allowed, claude goes on
// in the same process out of plan mode; such a process is never reused (proc.planExited): a
// later turn asking for plan mode would find claude not planning (TestRealPlanMode).
//
// Sandbox (sandbox.go): with Config.Sandbox = SandboxAuto and bubblewrap installed, claude
// runs in a sandbox that grants, not hides: its root is an empty tmpfs of its own and only
// what is listed is mounted into it (bwrapArgs per start; the recycled sandbox's start,
// core/sandbox/helper, builds the same root and pivots into it):
//
//	--unshare-user --disable-userns --cap-drop ALL --seccomp 3
//	  a user namespace of claude's own (its uid mapped to itself, root too), no capability,
//	  the syscall filter of core/internal/confine
//	--die-with-parent --unshare-pid --unshare-ipc --dev /dev --proc /proc
//	  its own pid namespace and /proc, its own System V IPC namespace
//	--ro-bind systemGrants            /usr, /bin, /lib*, the listed files of /etc
//	--perms 1777 --tmpfs /tmp, /var/tmp, claude's HOME when none is bound
//	--bind  <StateDir>/chats/<key> CLAUDE_CONFIG_DIR  the chat's own claude state
//	                                  (chatstate.go); the login and settings in the
//	                                  real directory bound into it read-only
//	--bind  workspace (no worktree), TMPDIR, Config.AddDirs  writable
//	--ro-bind Config.Expose, the turn's MCP config file, claude's package
//	                                  the tool socket and this chat's token, not the
//	                                  directory with every chat's
//	--ro-bind <workspace>/.claude     the project settings claude loads at its next
//	                                  start: it must not rewrite its own allow rules
//	--tmpfs <each Config.Hide>        data_dir, the config file's directory, other
//	                                  agents' workspaces — where a bound tree holds them
//	--tmpfs <workspace>/media, --bind <workspace>/media/<TurnRequest.MediaDir>
//	                                  only the chat's own attachments (a spare for
//	                                  brand-new chats: its own, +spare-<id>, spare.go)
//	worktree turns (TurnRequest.Dir): the workspace and its .git read-only; the
//	                                  worktree writable but its .git file and .claude;
//	                                  .git/objects, refs/heads/clawhost,
//	                                  logs/refs/heads/clawhost and the worktree's admin
//	                                  directory writable (its commondir, gitdir,
//	                                  config.worktree not); the other worktrees hidden
//	--remount-ro /                    the root's own tmpfs
//
// In a recycled sandbox the last program before claude (the helper's binary,
// confinedExec) also joins a new session keyring and applies Landlock with the same list.
// docs/security.md ("What a sandboxed claude sees") is this list for the operator, and
// core/e2e's TestSandboxManifest walks it from inside.
// Mounts are applied in order of depth, so what is bound inside a hidden tree (TMPDIR and
// the config directory are under data_dir) is visible and what is hidden inside the
// workspace is not. Mounts that change nothing the process sees are left out (prune: a
// hide inside a hidden tree, /dev/shm which --dev makes empty, a path bound at itself
// where it is shown so already, a mount covered at its path; never with a link in play):
// bubblewrap reads the whole mount table at each mount, about 0.2 ms of CPU each, and
// its own start with /dev and /proc is about 3 ms (BenchmarkSandboxStart). bwrap is the
// child: it leads claude's process group (it does not call setsid), so Abort's signal to
// the group and Pdeathsig (on bwrap; --die-with-parent and the end of the pid namespace
// take claude and everything it started) work as before; its group is not listed with the
// lifeline watcher, the end of the pid namespace does its work. A
// warm process is reused as before (TestFakeSandbox). Runner.Warm reports claude's pid
// inside, for the memory figures. Measured here (kernel 6.18, Debian bubblewrap 0.8.0):
// 0.17 s to start a sandboxed `sh`, working as root and as uid 65534 (unprivileged user
// namespaces are allowed). Landlock (ABI 7 here) is the second layer, not the first: it
// can only allow beneath what it names, never take back a subtree (other chats' media
// inside the workspace), and gives no private /proc or pid namespace; over a granted
// mount list it keeps the same list in the kernel (confineSpec).
// Without a working bwrap (not installed, or the probe run New makes fails: user
// namespaces disabled in a container) "auto" runs claude unsandboxed, says why in
// Runner.SandboxState (the status page) and logs a WARN at start. The sandbox is each
// agent's (Config.Agents): New probes once per distinct Config.Sandbox and Config.RunAs
// (bubblewrap runs as claude's user), and SandboxState says it per agent where the
// agents' differ.
//
// What the sandbox does not do: the network is open; a root claude is uid 0 without
// capabilities (what the list shows writable it may write, whoever owns it);
// with Config.Settings = SettingsUser the home directory stays writable (claude rewrites
// ~/.claude.json there). Config.RunAs (agent.run_as) adds a separate uid, each agent's
// own: its processes, TMPDIRs, prompt files, chats' claude state and attachments are that
// user's, and it gets its session's MCP config file as a copy of its own when the host's
// file is another user's (so does a root claude: it holds no capability to read it).
// Agents sharing a ConfigDir must run as one user (New refuses otherwise).
//
// Observed claude behaviour the caller should know: after a turn that failed with an API
// error, claude keeps the failed user message, and the next turn's prompt is merged into
// the same user message ("<failed prompt>\n<new prompt>") — the model sees both.
//
// Warm by memory (pool.go). A warm claude of the real CLI holds about 200 MB (its tree's
// Pss measured 197 MB after a first turn, sandboxed, claude 2.1.330), so a fixed count
// is too few on a large machine and too many on a small one. After its first turn, and
// after a turn at most once a minute (remeasureAfter: the kernel's walk of a 200 MB tree's
// page tables costs about a millisecond of CPU, too much for every turn), the
// process's tree — bubblewrap, claude, the tools and MCP servers it started — is measured
// (procmem.Tree: the proportional set size, so pages the processes share are counted
// once over all of them) through the memoryMeter port, in a goroutine of its own two
// seconds after the turn (measureDelay), so the answer never waits for /proc; a process not measured yet counts as the mean of those
// that are (210 MB before any is). While the warm processes hold more than
// Config.WarmMemory the idle ones least worth keeping are stopped, and a start makes
// room for itself first; busy ones never, so the busy alone may exceed the budget until
// their turns end. Config.MaxWarm, when set, applies too. The default budget is a
// quarter of the machine's memory, 256 MB to 16 GB (DefaultWarmMemory). Runner.Pool
// reports the pool and the time to first answer of returning chats (a turn of a session
// that ran before, Run → the first assistant text), on a warm process and where one was
// started, over the latest 256 of each; BenchmarkWarmMemory measures it for 50 chats of
// Zipf-like activity with a 2 GB budget beside all warm.
//
// Many chats, few processes. With more active chats than the pool keeps, a turn whose
// chat has no warm process pays a start (≈ 1 s, more to resume a long transcript) and
// stops another chat's idle process. One scheduler (sched.go) owns both orders a turn
// waits in, under Runner.mu: its key's earlier turns (a lane) and a free slot
// (Config.MaxConcurrent). The turn that ends hands its slot on and makes its key's next
// turn eligible in the same step, so that turn is weighed next to the process it is
// about to find idle — with two queues (lane channel, then a semaphore) it arrived after
// the slot had gone to a chat that had to start a process and evicted it.
//
// Which waiting turn gets a free slot: the one that began to wait first, where a turn
// whose key has an idle warm process counts as having begun 4 × that process's measured
// start time earlier (at most 30 s). Running it saves a start, which costs the slots as
// much as several turns wait; the bonus is in start times so it scales with what is
// saved (the real CLI's seconds, the test fake's milliseconds). Fairness: no turn is
// ever overtaken by one that began to wait more than the bonus after it, so a steady
// stream of warm turns delays a cold one by at most the bonus (TestSchedNoStarvation);
// each key has at most one turn waiting (the lane), so one chat cannot crowd out others.
//
// Which idle process is stopped when one must go (pool.go), for the count and the
// memory budget alike: never a busy one (a process just started runs its turn first),
// and not one whose key has a turn queued while any other is idle (it is about to be
// used). Among the rest, the least worth keeping by GreedyDual-Size-Frequency
// (Cherkasova 1998): worth = inflation + uses (at most 8) × the process's measured start
// time (spawn to first output: a resumed long transcript measures slower, so it is kept
// longer); each eviction raises the inflation to the victim's worth, so worth earned
// long ago ages out as under LRU, while a chat used often or costly to restart outlasts
// one that ran a single cheap turn. Size is left out of the worth (GDSF's divisor):
// claude processes differ little (184–210 MB measured), and dividing by a size that
// moves with every measurement would reorder them by noise; the budget decides how many
// stay, the worth which.
//
// Result.Wait reports, per turn, how long it waited for its chat's earlier turn and for a
// slot (running and waiting counts when it began), warm or why claude was started
// (Start), the warm count and whose idle process was stopped for it; Wait.String is the
// sentence /status shows. BenchmarkManyChats measures turn latency and starts per turn
// for 200 chats on 4 warm processes and 4 slots, and for 3 agents × 100 chats (MaxWarm 4
// each) beside one agent with the same 300 chats and messages (MaxWarm 12).
//
// Usage and rate limits (measured with claude 2.1.330 against the fake Anthropic API,
// CLAUDE_CODE_MAX_RETRIES=1). Logged in with a subscription (an OAuth token), a 429
// with anthropic-ratelimit-unified-status rejected, -unified-reset and
// -unified-representative-claim five_hour is not retried (1 request): claude writes
// {"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":<unix
// s>,"rateLimitType":"five_hour","isUsingOverage":false}}, a synthetic assistant message
// and an error result (exit 1): api_error_status 429, api_error_type rate_limit_error,
// terminal_reason api_error, result "You've hit your 5-hour limit · resets 4:16am
// (UTC)". That is KindUsageLimit, Error.ResetAt from resetsAt (the text's time has no
// date). A 429 with retry-after 3600 and no unified headers: one request, a
// rate_limit_event without resetsAt, result "API Error: Server is temporarily limiting
// requests (not your usage limit) · rate limited" — KindRateLimited, no reset. With an
// API key claude writes no rate_limit_event at all: the unified headers change nothing,
// a 429 is retried (MAX_RETRIES) and ends as "API Error: Request rejected (429) · …" —
// KindRateLimited. The host parks the turns either way (core/usagelimit): until the
// reset, or with a bounded backoff without one.
//
// What a result line says a turn cost (measured with claude 2.1.330 against the fake
// Anthropic API answering every request with 100k input and 1k output tokens, no cache):
//
//	case                          total_cost_usd  usage          modelUsage       model_usage_since_last_result
//	warm, turn 1                  0.42            100k/1k        100k/1k $0.42    100k/1k $0.42
//	warm, turn 2 (same process)   0.84            100k/1k        200k/2k $0.84    100k/1k $0.42
//	--resume in a new process     1.26            100k/1k        300k/3k $1.26    100k/1k $0.42
//	--resume after another        1.68            100k/1k        400k/4k $1.68    100k/1k $0.42
//	  session ran in the same cwd
//	fallback model (529s, then    1.785           100k/1k        opus 400k/4k     haiku 100k/1k $0.105
//	  --fallback-model haiku)                                    $1.68, haiku
//	                                                             100k/1k $0.105
//	API error, no answer          1.68 (unchanged) 0/0            unchanged        {} (present, empty)
//	Task tool (a sub-agent, new   1.26            200k/2k        300k/3k $1.26    300k/3k $1.26
//	  session): 3 requests        then 1.68       (main thread   then 400k/4k     then 100k/1k $0.42
//	  (2 main, 1 sub-agent)                       only)          $1.68            (an unasked turn, below)
//	/compact (resumed; the        +0.21           0/0            cumulative       haiku 200k/2k $0.21
//	  session's model haiku)
//
// So total_cost_usd and modelUsage are the claude session's running totals, kept across
// --resume (claude stores a "cost-state" line in the session's transcript and restores it,
// whatever session ran in the directory since), not the turn's. model_usage_since_last_result
// is the turn's own, per model, with costUSD: the main model, a fallback model, a
// sub-agent's and a compaction's requests. `usage` is the main thread's requests only (0/0
// for /compact, without the sub-agent's for a Task).
//
// Result.Usage.CostUSD is therefore the sum of model_usage_since_last_result's costUSD
// (PerTurnCost), Usage.Models its entries (the turn's whole tokens: the ledger takes them
// from there), Usage.SessionCostUSD the running total. For a claude without the per-turn
// field the caller charges the difference of two running totals, keeping the previous one
// durably (it outlives the process; a resumed claude continues it). claude 2.1.330 ran the
// Task as a background agent: when it completed, claude started a model turn of its own
// after the turn's result (a second system/init and result, result_index 1, $0.42 here)
// that no user message asked for. Every process now runs with NoBackgroundTasks, so a
// sub-agent runs inside the turn and its cost is the turn's; what claude still writes
// between turns is dropped (discardUnread) and logged.
//
// A turn cut before its result line (/stop, the agent.timeout, a crash) has none: the
// killed claude never wrote it. Its Result.Usage is then what the messages reported on
// the way (partial.go: message_start and the assistant lines carry a request's input and
// cache tokens, message_delta its output so far; each request counted once), with
// Result.UsageSeen and no cost — claude prices tokens, and it never said; the caller
// prices them (core/usage.Prices). A request cut before its first byte (a stalled API)
// shows nothing at all.
//
// The package imports nothing else from core; the composition package wires it.
//
// Files:
//
//	runner.go    Runner: New, Run, Abort, Close
//	turn.go      Turn, the caller's handle: its unbounded event queue; FinishedTurn
//	sched.go     the scheduler: per-key lanes, slots, which waiting turn runs next
//	wait.go      Wait: how a turn got to claude, and its sentence for /status
//	exchange.go  how one turn runs: waiting its turn, retries, writing the prompt, reading
//	             claude's output until the result, timeout and abort
//	stream.go    Event, Result, the stream-json wire types, assistant lines into events
//	partial.go   the usage a turn cut before its result line had reported so far
//	steer.go     Steer: a user message written into a running turn
//	pool.go      where warm processes are kept: acquire, release, idle timeout, eviction by
//	             worth (GreedyDual-Size-Frequency), Stop, Warm
//	process.go   one claude process: start, stdout reader, reaping, stop and kill; the
//	             process interface (PID, Signal, Wait) reap, kill and the pool use, and
//	             hostChild, its one kind today (claude or bwrap, the host's own child)
//	sysproc_*.go its process group, its user (run_as) and, on Linux, Pdeathsig
//	sandbox.go   the bubblewrap sandbox's policy: what each turn shape may see, claude's
//	             own directories
//	mounts.go    the mount list's mechanics: order, pruning, bubblewrap's argv
//	sandboxprobe.go the probe run of bwrap (ProbeSandbox), a root claude's capabilities
//	sandboxes.go which sandbox each agent's processes get (one probe per mode and user)
//	runas.go     what agent.run_as's user must be able to reach
//	config.go    Config: defaults, validation, argv (settings flags) and environment
//	errors.go    ErrorKind, Error, classification of results and exits
//	permission.go PermissionRequest, Decision: claude's can_use_tool questions and answers
//	rule.go      Rule: the exact permission rule an "always" grants, and what it covers
package runner
