//go:build unix

package program

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func sh(script string) []string { return []string{"/bin/sh", "-c", script} }

func TestRunOutput(t *testing.T) {
	out, err := Run(context.Background(), Cmd{Args: sh(`cat; printf %s "$FOO"`), Env: []string{"FOO=bar"}, Stdin: strings.NewReader("in:")})
	if err != nil || string(out) != "in:bar" {
		t.Fatalf("Run = %q, %v; want the input and the given env", out, err)
	}
	out, err = Run(context.Background(), Cmd{Args: sh(`head -c 5000 /dev/zero`), MaxOutput: 100})
	if err != nil || len(out) != 100 {
		t.Fatalf("bounded output: %d bytes, %v; want 100", len(out), err)
	}
	// nil Env is no environment at all, not the plugin's.
	t.Setenv("PROGRAM_TEST_SECRET", "s3cret")
	out, err = Run(context.Background(), Cmd{Args: []string{"/usr/bin/env"}})
	if err != nil || strings.Contains(string(out), "s3cret") {
		t.Fatalf("env with nil Env: %q, %v; want the plugin's environment kept out", out, err)
	}
}

func TestRunFailure(t *testing.T) {
	long := strings.Repeat("é", 300)
	_, err := Run(context.Background(), Cmd{Args: sh(`echo "  bad input ` + long + `" >&2; exit 3`)})
	var pe *Error
	if !errors.As(err, &pe) || pe.TimedOut || pe.ExitCode != 3 || pe.Name != "sh" {
		t.Fatalf("err = %#v, want exit 3 of sh", err)
	}
	if !strings.HasPrefix(pe.Stderr, "bad input é") || !strings.HasSuffix(pe.Stderr, "…") || len([]rune(pe.Stderr)) != stderrShown+1 {
		t.Errorf("Stderr = %q, want the start, trimmed, cut at %d characters", pe.Stderr, stderrShown)
	}
	if !strings.HasPrefix(err.Error(), "sh: exit 3: bad input") {
		t.Errorf("Error() = %q", err.Error())
	}
	_, err = Run(context.Background(), Cmd{Args: []string{"/nonexistent/program"}})
	if !errors.As(err, &pe) || pe.ExitCode != -1 || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing program: %v, want an *Error wrapping not-exist", err)
	}
	if _, err := Run(context.Background(), Cmd{}); err == nil {
		t.Error("no Args: no error")
	}
}

// TestRunKillsTheGroup: when the context ends, the program and what it
// started are killed (a wrapper script's child does not outlive it). The
// child holds a fifo open for writing: the test's read ends (EOF) when the
// last writer, the child, is gone.
func TestRunKillsTheGroup(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "child")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Run(ctx, Cmd{Args: sh(`sleep 300 > ` + fifo + ` & wait`), Env: []string{"PATH=/usr/bin:/bin"}})
		done <- err
	}()
	r, err := os.Open(fifo) // returns once the child opened its end
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cancel()
	err = <-done
	var pe *Error
	if !errors.As(err, &pe) || !pe.TimedOut || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want TimedOut with the context's error", err)
	}
	gone := make(chan error, 1)
	go func() { _, err := io.ReadAll(r); gone <- err }()
	select {
	case err := <-gone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the script's child outlived the run (its end of the fifo is still open)")
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("PATH", "/x/bin")
	got := strings.Join(Environ(map[string]string{"B": "2", "A": "1"}), " ")
	if got != "PATH=/x/bin A=1 B=2" {
		t.Errorf("Environ = %q", got)
	}
}
