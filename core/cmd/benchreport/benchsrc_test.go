package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChangedBenchmarks: in a repository of two commits, a benchmark whose
// code changed is found, one whose comments alone changed is not, nor one
// the base does not have; a benchmark moved to another file (and changed)
// is compared with its old self.
func TestChangedBenchmarks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		// A developer's signing settings must not reach the test's commits.
		cmd := exec.Command("git", append([]string{"-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write := func(name, src string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q")
	write("a/a_test.go", `package a

import "testing"

// BenchmarkCode is measured one way.
func BenchmarkCode(b *testing.B) { b.ReportMetric(1, "x") }

// BenchmarkComment says one thing.
func BenchmarkComment(b *testing.B) {
	b.ReportMetric(1, "y") // one
}

func BenchmarkMoved(b *testing.B) { b.ReportMetric(1, "z") }
`)
	run("add", ".")
	run("commit", "-q", "-m", "base")
	run("tag", "base")
	write("a/a_test.go", `package a

import "testing"

// BenchmarkCode is measured another way.
func BenchmarkCode(b *testing.B) { b.ReportMetric(2, "x") }

// BenchmarkComment says another thing.
func BenchmarkComment(b *testing.B) {
	b.ReportMetric(1, "y") // two
}

func BenchmarkNew(b *testing.B) {}
`)
	write("b/b_test.go", `package b

import "testing"

func BenchmarkMoved(b *testing.B) { b.ReportMetric(3, "z") }
`)
	run("add", ".")
	run("commit", "-q", "-m", "tree")
	got, err := changedBenchmarks(filepath.Join(dir, "a"), "base", []string{"BenchmarkCode", "BenchmarkComment", "BenchmarkNew", "BenchmarkMoved", "BenchmarkNowhere"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !got["BenchmarkCode"] || !got["BenchmarkMoved"] {
		t.Errorf("changed = %v, want BenchmarkCode and BenchmarkMoved", got)
	}
}

// TestReportBesideMarksChangedBenchmarks: a figure of a changed benchmark
// has its change marked and the note follows the table; others do not.
func TestReportBesideMarksChangedBenchmarks(t *testing.T) {
	figs := []figure{
		{Name: "a", Bench: "BenchmarkA/sub=1", Metric: "m", Info: true, Scale: 1},
		{Name: "b", Bench: "BenchmarkB", Metric: "m", Info: true, Scale: 1},
	}
	res := map[string]map[string][]float64{"BenchmarkA/sub=1": {"m": {2}}, "BenchmarkB": {"m": {2}}}
	base := map[string]map[string][]float64{"BenchmarkA/sub=1": {"m": {1}}, "BenchmarkB": {"m": {1}}}
	var b strings.Builder
	reportBeside(&b, figs, base, res, "v0", map[string]bool{"BenchmarkA": true})
	lines := strings.Split(b.String(), "\n")
	if !strings.Contains(lines[1], "+100% *") || strings.Contains(lines[2], "*") {
		t.Errorf("table:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "* the benchmark's own code differs between v0 and the tree") {
		t.Errorf("no note under the table:\n%s", b.String())
	}
}
