// Package confine is what a sandboxed claude gives up before it runs, in the
// last step of its start: a session keyring of its own, every capability (in
// every user namespace), a Landlock allow-list of the paths its sandbox grants,
// and a syscall filter modelled on Docker's default profile. The mounts of the
// sandbox decide what exists for claude; this package makes the kernel keep it
// so when a mount is forgotten, and takes away the calls that reach past
// mounts (open_by_handle_at) or out of every namespace (the keyring). A plugin
// marked untrusted_input (core/pluginhost) gives up what bubblewrap takes
// (BubblewrapArgs, FilterFile) and sees SystemGrants and Scratch.
//
// Two ways in: Filter is the compiled filter alone (bubblewrap per start loads
// it with --seccomp), and Exec, run as the last program before claude (the
// recycled sandbox's start, core/runner), applies everything on the calling
// thread and execs claude. The list of denied calls and the reason for each:
// docs/security.md ("The syscall filter").
package confine
