package archtest

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A test waits on events, bounded by sdktest.WaitBudget (issue 82): a wait
// that cannot end fails after minutes with what it saw, half way through it
// says so. A wait bounded by the test binary's own deadline (go test
// -timeout) instead turns one flaky test into a 30-minute hang with nothing
// said until the end. The one place that reads that deadline is
// sdktest.WaitDeadline, which caps it by the budget.

// testDeadline reads a testing.T's deadline: t.Deadline(), or the interface
// assertion that reaches it through a testing.TB.
var testDeadline = regexp.MustCompile(`\b(t|tb|b|f)\.Deadline\(\)|interface\{\s*Deadline\(\)`)

// deadlineReader is the one file that may read it.
const deadlineReader = "sdk/sdktest/wait.go"

// deadlineViolations are the files of files that bound a wait by the test
// binary's deadline (this package's own cases excepted).
func deadlineViolations(files map[string]string) []string {
	var out []string
	for name, src := range files {
		if name != deadlineReader && !under(name, "core/archtest") && testDeadline.MatchString(src) {
			out = append(out, name+": bounds a wait by the test binary's deadline ("+testDeadline.FindString(src)+"): use sdktest.WaitFor, Receive or WaitDeadline, bounded by sdktest.WaitBudget")
		}
	}
	slices.Sort(out)
	return out
}

// TestWaitsHaveABudget: no test or harness bounds a wait by the test
// binary's deadline except through sdktest.WaitDeadline.
func TestWaitsHaveABudget(t *testing.T) {
	t.Parallel()
	files := goFiles(t, true, "core", "sdk", "plugins", "examples", "markup")
	if _, ok := files[deadlineReader]; !ok {
		t.Fatalf("%s is gone: move the rule with it", deadlineReader)
	}
	for _, v := range deadlineViolations(files) {
		t.Error(v)
	}
	bad := map[string]string{
		"core/e2e/a_test.go":   "if at, ok := t.Deadline(); ok {}",
		"plugins/x/b_test.go":  "dt, ok := tb.(interface{ Deadline() (time.Time, bool) })",
		"core/c/c_test.go":     "end, _ := b.Deadline()",
		"core/d/ctx_test.go":   "_, ok := ctx.Deadline()",
		"sdk/sdktest/wait.go":  "dt.Deadline()",
		"core/e/timer_test.go": "timer := time.NewTimer(time.Until(sdktest.WaitDeadline(t)))",
	}
	if got := deadlineViolations(bad); len(got) != 3 {
		t.Errorf("the rule found %d of the 3 violations:\n%s", len(got), strings.Join(got, "\n"))
	}
}
