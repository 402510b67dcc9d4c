// Package nodump keeps a process's memory and environment from other
// processes of the same user.
//
// On Linux, Set clears the process's "dumpable" flag (prctl
// PR_SET_DUMPABLE 0). The kernel then lets only processes with
// CAP_SYS_PTRACE (root, in practice) read /proc/<pid>/environ, mem, maps,
// fd/ and the like, or attach with ptrace: a tool the agent runs as the
// same user can no longer read the bot token from the host's environment.
// No core file is written on a crash. The process itself keeps full access
// to its own /proc/self, and files every process may read
// (/proc/<pid>/statm, stat, status) stay readable, so memory figures and
// memtrim work as before. The flag is reset by execve, so it covers this
// process only, not the programs it starts.
//
// clawhost calls Set first thing in main; sdk.Serve does the same in every
// plugin. Elsewhere than Linux it does nothing.
package nodump

// Set clears the dumpable flag of the calling process (Linux; a no-op
// elsewhere).
func Set() error { return set() }
