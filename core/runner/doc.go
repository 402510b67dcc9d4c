// Package runner runs turns of Claude Code sessions by driving the claude CLI.
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
// Turns of one conversation key are serialized (two claude processes on one session lose
// a turn); Config.MaxConcurrent caps turns across keys. Run returns at once with a Turn
// whose Events channel yields assistant text, tool progress and the final Result.
// Success is claude's is_error == false; failures carry a stable ErrorKind and a short
// user-visible notice (see Error).
//
// Steer adds a user message to a running turn (OpenClaw's "steer" queue mode); see its doc
// for what claude does with it.
//
// Observed claude behaviour the caller should know: after a turn that failed with an API
// error, claude keeps the failed user message, and the next turn's prompt is merged into
// the same user message ("<failed prompt>\n<new prompt>") — the model sees both.
//
// The package imports nothing else from core; the composition package wires it.
package runner
