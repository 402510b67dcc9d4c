// Package lifeline makes the unsandboxed claude processes and everything they started
// die with the host, even when the host is killed with SIGKILL (Watcher).
package lifeline

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"github.com/hashicorp/go-hclog"
)

// Watcher makes claude and everything it started die with the host, even when the host is
// killed with SIGKILL: Pdeathsig reaches claude only, and the tools claude started would be
// re-parented and live on. One watcher per runner, a shell outside the host's and claude's
// process groups and without Pdeathsig, reads a pipe whose write end only the host holds:
// the host writes "+ <pgid>" when an unsandboxed claude starts (its process group: claude
// and its tools) and "- <pgid>" once it reaped it; when the host dies (or Close closes the
// pipe) the read ends and the watcher kills every group still listed. A pipe write per
// start instead of a shell started beside every claude (0.6–0.7 ms of the host's time on a
// first turn's path). In bubblewrap no group is listed: --die-with-parent and the end of
// claude's PID namespace do this work.
//
// A group leaves the list only after the host killed what claude left in it while claude's
// zombie still held the group's id (hostChild.Wait), so the watcher never signals an id
// that another process group may have taken since. At the host's death a listed group's
// claude dies (Pdeathsig) and its tools keep the id; with none left, the id is free for the
// instant the watcher needs to read EOF, and taking it would need the kernel's pid numbers
// to wrap around meanwhile.
type Watcher struct {
	log    hclog.Logger
	mu     sync.Mutex
	w      *os.File      // the pipe's write end; nil while no watcher runs
	ended  chan struct{} // closed when the latest watcher has exited
	pid    int           // the latest watcher's
	groups map[int]bool  // the listed process groups
}

// New returns a watcher that logs to log; it starts its process at the first Add.
func New(log hclog.Logger) *Watcher { return &Watcher{log: log} }

// lifelineScript is the watcher: it keeps the listed groups in $g (" 12 34 ") with the
// shell's builtins only, and kills them at the end of its input.
const lifelineScript = `g=' '
while read -r op id; do
  case $op in
  +) g="$g$id " ;;
  -) case $g in *" $id "*) g="${g%% $id *} ${g#* $id }" ;; esac ;;
  esac
done
for id in $g; do kill -9 -$id; done`

// Add lists process group pgid, starting the watcher when none runs (the first start, or
// after the watcher died: then every listed group again). It logs and returns false when
// no watcher could be started; claude then runs without one.
func (l *Watcher) Add(pgid int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.groups == nil {
		l.groups = map[int]bool{}
	}
	l.groups[pgid] = true
	if l.w != nil && l.writeLocked("+ "+strconv.Itoa(pgid)+"\n") {
		return true
	}
	if !l.startLocked() {
		return false
	}
	var b []byte
	for g := range l.groups {
		b = append(append(append(b, "+ "...), strconv.Itoa(g)...), '\n')
	}
	return l.writeLocked(string(b))
}

// Remove takes pgid off the list: the host reaped its claude and killed what was left in
// its group.
func (l *Watcher) Remove(pgid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.groups[pgid] {
		return
	}
	delete(l.groups, pgid)
	if l.w != nil {
		l.writeLocked("- " + strconv.Itoa(pgid) + "\n")
	}
}

// Close ends the watcher: it kills the groups still listed and exits.
func (l *Watcher) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w != nil {
		l.w.Close()
		l.w = nil
	}
}

// writeLocked writes s (a few lines, under PIPE_BUF: one write) to the watcher; false
// (and the watcher forgotten) when it is gone.
func (l *Watcher) writeLocked(s string) bool {
	if _, err := l.w.WriteString(s); err != nil {
		l.w.Close()
		l.w = nil
		return false
	}
	return true
}

// startLocked starts the watcher.
func (l *Watcher) startLocked() bool {
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		l.log.Warn("no /bin/sh: the tools claude starts may outlive a killed host", "error", err)
		return false
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		l.log.Warn("lifeline pipe failed", "error", err)
		return false
	}
	defer rd.Close()
	cmd := exec.Command(sh, "-c", lifelineScript)
	cmd.Stdin = rd
	cmd.Env = []string{}
	cmd.SysProcAttr = lifelineAttr()
	if err := cmd.Start(); err != nil {
		wr.Close()
		l.log.Warn("lifeline watcher failed to start", "error", err)
		return false
	}
	ended := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(ended)
	}()
	l.w, l.ended, l.pid = wr, ended, cmd.Process.Pid
	return true
}

// lifelineAttr puts the lifeline watcher in a process group of its own (a signal to the
// host's group, a terminal's Ctrl-C, leaves it be) and, unlike claude, without
// Pdeathsig: it must outlive the host to kill what claude started.
func lifelineAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
