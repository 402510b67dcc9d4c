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
// Config.IdleTimeout without turns, or when more than Config.MaxWarm are warm (least
// recently used first). The next turn of a session without a live process resumes it
// with --resume. With Config.OneShot every turn starts a process, writes the prompt to
// stdin and closes it. Prompts never appear in argv; each process has its own TMPDIR under
// Config.StateDir and the workspace as cwd, runs in its own process group (so Abort kills
// tools it started) and, on Linux, dies with the host (Pdeathsig SIGKILL).
//
// Environment: claude does not inherit the host's environment, which holds the host's
// secrets (TELEGRAM_BOT_TOKEN and the like) that the model's tools could otherwise read.
// It gets PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM and TZ; claude's own settings
// when the host has them (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL,
// the ANTHROPIC_*MODEL variables, CLAUDE_CONFIG_DIR, the proxy variables,
// NODE_EXTRA_CA_CERTS, IS_SANDBOX — the list and the reason for each are at claudeEnv);
// the runner's settings (its private TMPDIR, the variables that keep claude from any
// traffic but the API, CLAUDE_CODE_MAX_RETRIES); and Config.Env (agent.env), which
// overrides all but TMPDIR. Anything else claude or its tools need goes in agent.env.
//
// Observed claude behaviour the caller should know: after a turn that failed with an API
// error, claude keeps the failed user message, and the next turn's prompt is merged into
// the same user message ("<failed prompt>\n<new prompt>") — the model sees both.
//
// The package imports nothing else from core; the composition package wires it.
//
// Files:
//
//	runner.go    Runner: New, Run (per-key lanes), Abort, Close
//	turn.go      Turn, the caller's handle: its unbounded event queue; FinishedTurn
//	exchange.go  how one turn runs: queueing, retries, writing the prompt, reading claude's
//	             output until the result, timeout and abort
//	stream.go    Event, Result, the stream-json wire types, assistant lines into events
//	steer.go     Steer: a user message written into a running turn
//	pool.go      where warm processes are kept: acquire, release, idle and LRU eviction,
//	             Stop, Warm
//	process.go   one claude process: start, stdout reader, reaping, stop and kill
//	sysproc_*.go its process group and, on Linux, Pdeathsig
//	config.go    Config: defaults, validation, argv and environment
//	errors.go    ErrorKind, Error, classification of results and exits
//	coalesce.go  Coalescer: streamed text into chat-sized blocks
//	flush.go     MemoryFlush: when a session runs a memory-flush turn
package runner
