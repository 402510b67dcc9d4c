package archtest

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A session key is a sessionkey.Key{Agent, Chat} (issue 54): code that
// needs the agent or the chat reads the fields. The string form
// ("agent:<agent>:<chat>") is for the store, the queue, logs and the
// wire; it is read back with sessionkey.Parse only where such a string
// comes back in, and never taken apart by hand.

var (
	// keySurgery builds or cuts a key's agent prefix by hand, or calls
	// the string helpers the Key replaced.
	keySurgery = regexp.MustCompile(`"agent:"|\bSplitAgent\b|sessionkey\.ForAgent\b`)
	// keyParse reads a key's string form.
	keyParse = regexp.MustCompile(`sessionkey\.Parse\(`)
)

// keyBoundary are the files where a key's string form comes back in and
// is parsed: the lane's batch from the queue (gateway.keyOf), a reply recorded in the outbox
// (delivery), the store's session list and the runner's warm processes
// (the status view), and a plugin tool call's conversation (its workdir).
// The list may only shrink.
var keyBoundary = []string{"core/gateway/gateway.go", "core/delivery/media.go", "core/status.go", "core/plugintools.go"}

// sessionKeyViolations are the files of files that take a session key's
// string apart outside core/sessionkey and the boundary.
func sessionKeyViolations(files map[string]string) []string {
	var out []string
	for name, src := range files {
		if under(name, "core/sessionkey") {
			continue
		}
		if m := keySurgery.FindString(src); m != "" {
			out = append(out, name+": takes a session key apart by hand ("+m+"): use sessionkey.Key's fields")
		}
		if keyParse.MatchString(src) && !slices.Contains(keyBoundary, name) {
			out = append(out, name+": parses a session key's string form: take a sessionkey.Key from the caller")
		}
	}
	slices.Sort(out)
	return out
}

// TestSessionKeyIsTyped: no file outside core/sessionkey builds or splits
// a key's "agent:" prefix, and only the boundary files parse its string
// form.
func TestSessionKeyIsTyped(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, dir := range []string{"core", "sdk", "plugins", "examples"} {
		for k, v := range repoFiles(t, dir) {
			files[k] = v
		}
	}
	for _, v := range sessionKeyViolations(files) {
		t.Error(v)
	}
	for _, known := range keyBoundary {
		if src, ok := files[known]; ok && !keyParse.MatchString(src) {
			t.Errorf("%s no longer parses a session key: remove it from keyBoundary", known)
		}
	}
}

// TestSessionKeyRulesCatchViolations makes sure the check can fail.
func TestSessionKeyRulesCatchViolations(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"core/turn/a.go":     `agent, _ := sessionkey.SplitAgent(key)`,
		"core/agents/b.go":   `return sessionkey.ForAgent(agent, base)`,
		"core/command/c.go":  `rest, _ := strings.CutPrefix(key, "agent:")`,
		"core/gateway/d.go":  `k, err := sessionkey.Parse(b.Key)`,
		"plugins/x/e.go":     `key := "agent:" + agent + ":" + chat`,
		"core/delivery/f.go": `func SplitAgent(key string) (string, string)`,
	}
	got := sessionKeyViolations(bad)
	if len(got) != len(bad) {
		t.Errorf("found %d violations in %d bad files:\n%s", len(got), len(bad), strings.Join(got, "\n"))
	}
	good := map[string]string{
		"core/sessionkey/a.go":    `const agentPrefix = "agent:"`,
		"core/gateway/gateway.go": `k, err := sessionkey.Parse(s)`,
		"core/turn/b.go":          `set := t.settings().ForAgent(key.Agent)`,
		"core/runner/c.go":        `errors.New("agent: timeout must not be negative")`,
	}
	if got := sessionKeyViolations(good); len(got) > 0 {
		t.Errorf("violations in good files:\n%s", strings.Join(got, "\n"))
	}
}
