// Package program runs a plugin's external program — a transcriber, an
// audio encoder, a hook script — as a plugin that the host supervises
// should: bounded in time by its context, in a process group of its own
// that is killed whole when the context ends (a wrapper script's children
// do not outlive it), its output bounded, and its failure told with its
// exit status and the start of what it wrote to standard error.
//
//	out, err := program.Run(ctx, program.Cmd{Args: []string{"whisper", path}, MaxOutput: 1 << 20})
//	var pe *program.Error
//	if errors.As(err, &pe) && pe.TimedOut { … }
package program

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Cmd is one run of a program.
type Cmd struct {
	// Args are the program (a path or a name looked up in Env's PATH) and
	// its arguments; at least one.
	Args []string
	// Env is its whole environment (nil: none at all, not the plugin's).
	Env []string
	// Stdin is its standard input (nil: empty).
	Stdin io.Reader
	// MaxOutput is how many bytes of its standard output are kept; what
	// comes after is read and dropped. 0: 1 MiB.
	MaxOutput int
}

// Environ is the environment a plugin gives its programs: the plugin's
// own PATH (to find them) and vars (the configuration's env map, sorted),
// nothing else of the plugin's environment.
func Environ(vars map[string]string) []string {
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return env
}

// stderrKept is how much of standard error is read for Error.Stderr, and
// stderrShown how many characters of it Error keeps.
const (
	stderrKept  = 4096
	stderrShown = 200
)

// Error is a run that failed.
type Error struct {
	// Name is the program's base name.
	Name string
	// TimedOut: the context ended before the program did (it was killed).
	TimedOut bool
	// ExitCode is its exit status; -1 when it did not exit by itself
	// (killed, or never started).
	ExitCode int
	// Stderr is the start of its standard error, trimmed, at most 200
	// characters (an ellipsis marks a cut).
	Stderr string
	// Err is the underlying error (the context's when TimedOut).
	Err error
}

// Error is "<name>: exit <code>: <stderr>", or the underlying error in
// place of the exit status.
func (e *Error) Error() string {
	what := e.Err.Error()
	if e.ExitCode >= 0 && !e.TimedOut {
		what = fmt.Sprintf("exit %d", e.ExitCode)
	}
	if e.Stderr != "" {
		return e.Name + ": " + what + ": " + e.Stderr
	}
	return e.Name + ": " + what
}

// Unwrap is Err.
func (e *Error) Unwrap() error { return e.Err }

// Run runs c until it exits or ctx ends, and returns what it wrote to
// standard output (at most MaxOutput bytes). A failure — a start that
// failed, a non-zero exit, the context's end — is an *Error.
func Run(ctx context.Context, c Cmd) ([]byte, error) {
	if len(c.Args) == 0 {
		return nil, errors.New("program: no program to run")
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = c.Stdin
	// The group's kill closes its pipes; a grandchild holding them anyway
	// is not waited for longer than this.
	cmd.WaitDelay = time.Second
	ownGroup(cmd)
	out := &limited{max: c.MaxOutput}
	if out.max <= 0 {
		out.max = 1 << 20
	}
	errb := &limited{max: stderrKept}
	cmd.Stdout, cmd.Stderr = out, errb
	err := cmd.Run()
	if err == nil {
		return out.buf.Bytes(), nil
	}
	e := &Error{Name: filepath.Base(c.Args[0]), ExitCode: -1, Err: err, Stderr: excerpt(errb.buf.String())}
	if ctx.Err() != nil {
		e.TimedOut, e.Err = true, ctx.Err()
		return nil, e
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		e.ExitCode = ee.ExitCode()
	}
	return nil, e
}

// excerpt is s trimmed and cut at stderrShown characters.
func excerpt(s string) string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if r := []rune(s); len(r) > stderrShown {
		return string(r[:stderrShown]) + "…"
	}
	return s
}

// limited keeps the first max bytes written to it and drops the rest. Its
// buffer is a field, not embedded: an embedded bytes.Buffer's ReadFrom
// would be what io.Copy (and so exec.Cmd) calls, past the limit.
type limited struct {
	buf bytes.Buffer
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
