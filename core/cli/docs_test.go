package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The user documentation this test reads, relative to this package.
const repoRoot = "../.."

// notYetMerged are names other branches add: commands and pages the docs
// already name. The lead removes each entry when its branch is merged.
var (
	notYetMergedCommands = map[string]bool{}
	notYetMergedPages    = map[string]bool{"docs/install.md": true}
)

// docFiles are README.md and docs/*.md, relative to the repository root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{"README.md"}
	for _, f := range files {
		rel, _ := filepath.Rel(repoRoot, f)
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	fence    = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	codeSpan = regexp.MustCompile("`[^`\n]+`")
	// clawhostCmd and makeCmd are a command line that runs clawhost (also
	// as bin/clawhost) or make, after a prompt and variable assignments.
	clawhostCmd = regexp.MustCompile(`^(?:\$ )?(?:[A-Z_]+=\S* )*(?:\S*/)?clawhost ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?`)
	makeCmd     = regexp.MustCompile(`^(?:\$ )?(?:[A-Z_]+=\S* )*make ([a-z][a-z-]*)`)
)

// commandLines are the lines a doc shows as code — of fenced blocks and
// code spans — trimmed: where a command line would start.
func commandLines(doc string) []string {
	var lines []string
	for _, block := range fence.FindAllString(doc, -1) {
		for _, l := range strings.Split(block, "\n") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	for _, span := range codeSpan.FindAllString(fence.ReplaceAllString(doc, ""), -1) {
		lines = append(lines, strings.Trim(span, "` "))
	}
	return lines
}

// knownCommand says whether the words after `clawhost` name a command of
// the table: the first word must start one; when a command of several
// words starts with it and a second word follows, the pair must be one.
func knownCommand(first, second string) bool {
	if first == "mcp-schedule" || notYetMergedCommands[first] {
		return true
	}
	if _, ok := lookup(first); !ok {
		return false
	}
	multi := false
	for _, c := range commands {
		if strings.HasPrefix(c.name, first+" ") {
			multi = true
			if second != "" && c.name == first+" "+second {
				return true
			}
		}
	}
	return !multi || second == ""
}

// TestDocsNameRealCommands checks that every `clawhost <command>` the
// README and docs/*.md show as code is in the command table.
func TestDocsNameRealCommands(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, name := range docFiles(t) {
		for _, l := range commandLines(readDoc(t, name)) {
			if m := clawhostCmd.FindStringSubmatch(l); m != nil {
				seen++
				if !knownCommand(m[1], m[2]) {
					t.Errorf("%s names %q, which is not a clawhost command (see clawhost help)", name, m[0])
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no clawhost command found in the docs: the scan is broken")
	}
}

func TestKnownCommand(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		first, second string
		want          bool
	}{
		{"status", "", true}, {"pairing", "approve", true}, {"pairing", "", true},
		{"pairing", "accept", false}, {"security", "audit", true}, {"frobnicate", "", false},
		{"help", "plugin", true}, {"statuss", "", false},
	} {
		if got := knownCommand(c.first, c.second); got != c.want {
			t.Errorf("knownCommand(%q, %q) = %v, want %v", c.first, c.second, got, c.want)
		}
	}
}

// TestDocsNameRealMakeTargets checks that every `make <target>` shown as
// code is a target of the Makefile.
func TestDocsNameRealMakeTargets(t *testing.T) {
	t.Parallel()
	makefile := readDoc(t, "Makefile")
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z-]*):`).FindAllStringSubmatch(makefile, -1) {
		targets[m[1]] = true
	}
	if !targets["test"] || !targets["run"] || makeCmd.FindStringSubmatch("CHAOS_ARGS=x make chaos")[1] != "chaos" {
		t.Fatalf("the Makefile's targets were not found (got %v)", targets)
	}
	for _, name := range docFiles(t) {
		for _, l := range commandLines(readDoc(t, name)) {
			if m := makeCmd.FindStringSubmatch(l); m != nil && !targets[m[1]] {
				t.Errorf("%s names `make %s`, which is not a target of the Makefile", name, m[1])
			}
		}
	}
}

var (
	mdLink  = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
)

// anchor is the id GitHub gives a heading: lower case, punctuation but -
// and _ dropped, spaces as -.
func anchor(heading string) string {
	heading = strings.NewReplacer("`", "", "**", "").Replace(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading ids of a Markdown file (a repeated heading
// gets -1, -2, as on GitHub).
func anchors(doc string) map[string]bool {
	ids := map[string]bool{}
	count := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(doc, ""), -1) {
		id := anchor(m[1])
		if n := count[id]; n > 0 {
			ids[id+"-"+strconv.Itoa(n)] = true
		} else {
			ids[id] = true
		}
		count[id]++
	}
	return ids
}

// TestDocsLinksResolve checks that every relative link of the README and
// docs/*.md names a file that exists and, with #anchor into a Markdown
// file, a heading of it.
func TestDocsLinksResolve(t *testing.T) {
	t.Parallel()
	links := 0
	for _, name := range docFiles(t) {
		doc := readDoc(t, name)
		prose := codeSpan.ReplaceAllString(fence.ReplaceAllString(doc, ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(prose, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			path := name
			if file != "" {
				path = filepath.ToSlash(filepath.Join(filepath.Dir(name), file))
			}
			if notYetMergedPages[path] {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, path)); err != nil {
				t.Errorf("%s links to %s: no such file", name, target)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(readDoc(t, path))[frag] {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s", name, target, path, frag)
			}
		}
	}
	if links == 0 {
		t.Fatal("no relative link found in the docs: the scan is broken")
	}
}

func TestAnchor(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"The claude CLI: login, settings, sandbox":                    "the-claude-cli-login-settings-sandbox",
		"A team on one bot: usage, budgets, flood limit, audit trail": "a-team-on-one-bot-usage-budgets-flood-limit-audit-trail",
		"agent.memory_flush":            "agentmemory_flush",
		"`clawhost status`":             "clawhost-status",
		"Several hosts on one database": "several-hosts-on-one-database",
	} {
		if got := anchor(h); got != want {
			t.Errorf("anchor(%q) = %q, want %q", h, got, want)
		}
	}
	if ids := anchors("# A\n## A\n```\n# B\n```\n"); !ids["a"] || !ids["a-1"] || ids["b"] {
		t.Errorf("anchors = %v, want a and a-1, not b (in a code block)", ids)
	}
}
