package archtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The platform knowledge of the bundled channels lives in their plugins
// (issue 54): the core learns what it needs through the plugin contract —
// a plugin's Probe, its id forms, DirectToSender — so that a channel
// written by someone else gets the same treatment. These checks keep it
// there.

// platformBranch is a branch on the name of a channel plugin bundled under
// plugins/ (read from the tree, so that a new channel is covered the day it
// lands, not when someone remembers to add it to a list).
var platformBranch = branchOn(bundledChannels())

// servesChannel is how a plugin's package hands the sdk its channel: a
// Channel field in its sdk.Plugin literal.
var servesChannel = regexp.MustCompile(`(?m)^\s+Channel:\s+\w+,\s*$`)

// bundledChannels are the directories under plugins/ whose package serves
// a channel (git, memory and voice are plugins too, but no platform: "git"
// is a command name the core may compare with).
func bundledChannels() []string {
	root := filepath.Join("..", "..", "plugins")
	entries, err := os.ReadDir(root)
	if err != nil {
		panic("archtest: reading plugins/: " + err.Error())
	}
	var names []string
	for _, e := range entries {
		files, _ := filepath.Glob(filepath.Join(root, e.Name(), "*.go"))
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil && !strings.HasSuffix(f, "_test.go") && servesChannel.Match(b) {
				names = append(names, regexp.QuoteMeta(e.Name()))
				break
			}
		}
	}
	if len(names) < 2 {
		panic(fmt.Sprintf("archtest: found %d channel plugins under plugins/ (%v): the platform rule would check next to nothing", len(names), names))
	}
	return names
}

// branchOn matches a switch case or a comparison on one of names.
func branchOn(names []string) *regexp.Regexp {
	alt := strings.Join(names, "|")
	return regexp.MustCompile(`case\s+"(` + alt + `)"|[!=]=\s*"(` + alt + `)"|"(` + alt + `)"\s*[!=]=`)
}

var (
	// getMe is Telegram's Bot API call.
	getMe = regexp.MustCompile(`\bgetMe\b`)
	// pluginDataPath builds a path under data_dir/plugins (a plugin's
	// private directory), or names a file the bundled plugins keep there.
	pluginDataPath = regexp.MustCompile(`Join\([^)]*DataDir,\s*"plugins"|"whatsapp\.db"|"access\.token"`)
)

// knownPlatformBranches are the branches on a platform's name still in
// the core, each waiting for its plugin-declared replacement. None is
// left: the audit and the sandbox rule read the address a channel serves
// people on from what its schema marks (schema.Attribute.Listen), for any
// channel. The list may only shrink.
var knownPlatformBranches = []string{}

// pluginDirMaker is the one file that builds an instance's data directory
// path: settings.Plugin hands it to the plugin (and the launcher makes it). No
// other core file builds a path in it.
const pluginDirMaker = "core/settings/settings.go"

// repoFiles are the repository's non-test Go files under dirs, relative
// to the repository root.
func repoFiles(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	return goFiles(t, false, dirs...)
}

// goFiles are the Go files under dirs (test files too when withTests),
// relative to the repository root, testdata and hidden directories left
// out. A dir without any fails the test: the check would see nothing there.
func goFiles(t *testing.T, withTests bool, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		n := len(out)
		goFilesUnder(t, dir, withTests, out)
		if len(out) == n {
			t.Fatalf("no Go files under %s: the check would see nothing", dir)
		}
	}
	return out
}

// goFilesUnder adds the Go files under dir to out.
func goFilesUnder(t *testing.T, dir string, withTests bool, out map[string]string) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || (!withTests && strings.HasSuffix(p, "_test.go")) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(r)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// stillNeeded fails the test for each file of known (a rule's list of
// exceptions) that no longer matches re: the list must shrink with the
// code. why says what the file no longer does and the list's name.
func stillNeeded(t *testing.T, files map[string]string, known []string, re *regexp.Regexp, why string) {
	t.Helper()
	for _, k := range known {
		if src, ok := files[k]; ok && !re.MatchString(src) {
			t.Errorf("%s no longer %s", k, why)
		}
	}
}

// platformViolations are the files of files that break the rules of this
// file, with why.
func platformViolations(files map[string]string) []string {
	var out []string
	for name, src := range files {
		if under(name, "core") && platformBranch.MatchString(src) && !slices.Contains(knownPlatformBranches, name) {
			out = append(out, name+": branches on a bundled platform's name ("+platformBranch.FindString(src)+"): let the plugin declare it")
		}
		if !under(name, "plugins/telegram") && getMe.MatchString(src) {
			out = append(out, name+": names getMe, which only the telegram plugin calls")
		}
		if under(name, "core") && name != pluginDirMaker && pluginDataPath.MatchString(src) {
			out = append(out, name+": reaches into a plugin's data directory ("+pluginDataPath.FindString(src)+"): ask the plugin (its Probe)")
		}
	}
	slices.Sort(out)
	return out
}

// TestPlatformKnowledgeInPlugins: no core file branches on a bundled
// platform's name, getMe appears only under plugins/telegram, and nothing
// in the core opens a file in a plugin's data directory.
func TestPlatformKnowledgeInPlugins(t *testing.T) {
	t.Parallel()
	files := repoFiles(t, "core", "sdk", "plugins", "examples", "markup")
	for _, v := range platformViolations(files) {
		t.Error(v)
	}
	stillNeeded(t, files, knownPlatformBranches, platformBranch, "branches on a platform's name: remove it from knownPlatformBranches")
}

// TestPlatformRulesCatchViolations makes sure the checks can fail.
func TestPlatformRulesCatchViolations(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"telegram", "discord", "whatsapp", "webchat", "slack"} {
		if !slices.Contains(bundledChannels(), want) {
			t.Errorf("bundledChannels() = %v, missing %s", bundledChannels(), want)
		}
	}
	bad := map[string]string{
		"core/a.go":            `switch p.Source { case "telegram": }`,
		"core/b.go":            `if p.Source == "discord" {}`,
		"core/c.go":            `if "whatsapp" != src {}`,
		"core/d.go":            `call(token, "getMe")`,
		"sdk/e.go":             `// asks getMe`,
		"core/f.go":            `filepath.Join(cfg.DataDir, "plugins", p.Name, "x.db")`,
		"core/g.go":            `const db = "whatsapp.db"`,
		"core/audit_x.go":      `case "webchat":`,
		"core/slack.go":        `if ch == "slack" {}`,
		"plugins/discord/h.go": `getMe()`,
	}
	got := platformViolations(bad)
	if len(got) != len(bad) {
		t.Errorf("found %d violations in %d bad files:\n%s", len(got), len(bad), strings.Join(got, "\n"))
	}
	good := map[string]string{
		"plugins/telegram/a.go":     `raw, err := call(ctx, "getMe", nil)`,
		"core/b.go":                 `s.getMessages(w); source := "telegram" // a name, no branch`,
		"core/settings/settings.go": `DataDir: filepath.Join(cfg.DataDir, "plugins", p.Name)`,
		"plugins/webchat/c.go":      `if src == "webchat" {}`,
	}
	if got := platformViolations(good); len(got) > 0 {
		t.Errorf("violations in files that keep the rules:\n%s", strings.Join(got, "\n"))
	}
}
