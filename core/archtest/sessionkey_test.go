package archtest

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A session key is a sessionkey.Key{Agent, Chat} (issues 54, 82): code
// that needs the agent or the chat reads the fields, and the key travels
// typed through the pipeline (the queue's lanes, delivery, the commands,
// approvals). The string form ("agent:<agent>:<chat>") is for the store's
// columns, logs and the plugins' wire; it is read back with
// sessionkey.Parse only at the edges where such a string comes back in,
// and neither it nor the chat key is ever taken apart by hand (the chat's
// type is the message's field, not a substring of the key).

var (
	// keySurgery builds or cuts a key's agent prefix by hand, or calls
	// the string helpers the Key replaced.
	keySurgery = regexp.MustCompile(`"agent:"|\bSplitAgent\b|sessionkey\.ForAgent\b`)
	// keyParse reads a key's string form.
	keyParse = regexp.MustCompile(`sessionkey\.Parse\(`)
	// chatSurgery cuts a session key's chat apart ("<instance>:<kind>:<peer>")
	// to find its instance or its type.
	chatSurgery = regexp.MustCompile(`strings\.(Split|SplitN|Cut|Index|Fields|HasPrefix|TrimPrefix|CutPrefix)\((\w+\.)*(\w*[kK]ey|k)\.Chat\b`)
)

// keyBoundary are the files where a key's string form comes back in and
// is parsed: the gateway's reads of the store (queued entries at a
// restart, session rows, the sessions a usage-limit pause held:
// gateway.storedKey), the store's session list, the runner's warm
// processes and the status page's actions (the status view), and a plugin
// tool call's conversation (its workdir). Inside the pipeline (queue,
// delivery, commands, turn) nothing parses a key. The list may only shrink.
var keyBoundary = []string{"core/gateway/stored.go", "core/status.go", "core/plugintools.go"}

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
		if m := chatSurgery.FindString(src); m != "" {
			out = append(out, name+": cuts a session key's chat apart ("+m+"): take the instance or the chat type from the message")
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
	files := repoFiles(t, "core", "sdk", "plugins", "examples")
	for _, v := range sessionKeyViolations(files) {
		t.Error(v)
	}
	stillNeeded(t, files, keyBoundary, keyParse, "parses a session key: remove it from keyBoundary")
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
		"core/delivery/g.go": `k, err := sessionkey.Parse(stored)`,
		"core/gateway/h.go":  `if parts := strings.Split(r.Key.Chat, ":"); len(parts) > 1 {`,
		"core/gateway/i.go":  `instance, _, _ := strings.Cut(key.Chat, ":")`,
	}
	got := sessionKeyViolations(bad)
	if len(got) != len(bad) {
		t.Errorf("found %d violations in %d bad files:\n%s", len(got), len(bad), strings.Join(got, "\n"))
	}
	good := map[string]string{
		"core/sessionkey/a.go":   `const agentPrefix = "agent:"`,
		"core/gateway/stored.go": `k, err := sessionkey.Parse(s)`,
		"core/agenttools/j.go":   `instance, chatID, ok := strings.Cut(req.Chat, ":")`,
		"core/turn/b.go":         `set := t.Profile(key.Agent)`,
		"core/runner/c.go":       `errors.New("agent: timeout must not be negative")`,
	}
	if got := sessionKeyViolations(good); len(got) > 0 {
		t.Errorf("violations in good files:\n%s", strings.Join(got, "\n"))
	}
}
