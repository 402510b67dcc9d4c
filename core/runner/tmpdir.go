package runner

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// takeTmpdir is the TMPDIR for a process of c: the spare one made for c's user after the
// previous start (spareTmpdir), else one made now. Making a directory and handing it to
// claude's user were 0.14–0.3 ms of a first turn's path (BenchmarkFirstTurnTelegram,
// traced, under /tmp).
func (r *Runner) takeTmpdir(c *Config) (string, *Error) {
	uid := uidOf(c.RunAs)
	r.mu.Lock()
	tmp := r.spareTmp[uid]
	if tmp != "" {
		delete(r.spareTmp, uid)
	}
	r.mu.Unlock()
	if tmp != "" {
		return tmp, nil
	}
	return r.newTmpdir(c)
}

// spareTmpdir makes a TMPDIR for the next start of a process running as c's user, unless
// there is one or one is being made: an empty directory of its own, as newTmpdir makes at
// a start. Close removes it.
func (r *Runner) spareTmpdir(c *Config) {
	uid := uidOf(c.RunAs)
	r.mu.Lock()
	_, have := r.spareTmp[uid] // "": being made
	if r.closed || have {
		r.mu.Unlock()
		return
	}
	if r.spareTmp == nil {
		r.spareTmp = map[int64]string{}
	}
	r.spareTmp[uid] = ""
	r.mu.Unlock()
	tmp, err := r.newTmpdir(c)
	r.mu.Lock()
	keep := err == nil && !r.closed
	if keep {
		r.spareTmp[uid] = tmp
	} else if !r.closed {
		delete(r.spareTmp, uid)
	}
	r.mu.Unlock()
	if err == nil && !keep {
		_ = os.RemoveAll(tmp)
	}
}

// newTmpdir creates the next process's TMPDIR under Config.StateDir, owned by the user
// c's claude runs as: a directory of its own, never one that exists. The names repeat
// across runs (the host's pid and a count: a container's host is pid 1 at every start),
// and a host killed with -9 leaves its claudes' TMPDIRs behind — another chat's files and
// system prompt — until RemoveLeftovers has removed them.
func (r *Runner) newTmpdir(c *Config) (string, *Error) {
	var tmp string
	for {
		r.mu.Lock()
		r.seq++
		n := r.seq
		r.mu.Unlock()
		tmp = filepath.Join(r.cfg.StateDir, "t", strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(n))
		err := os.Mkdir(tmp, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", newError(KindCrash, fmt.Sprintf("create TMPDIR: %v", err))
		}
	}
	if u := c.RunAs; u != nil {
		if err := u.Chown(tmp); err != nil {
			_ = os.Remove(tmp)
			return "", newError(KindCrash, fmt.Sprintf("agent.run_as: TMPDIR: %v", err))
		}
	}
	return tmp, nil
}
