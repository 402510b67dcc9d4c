package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/internal/confine"
)

// docRows are the rows of docs/security.md's "What a sandboxed claude sees": each row's
// name (its bold first cell) and its text, in order.
func docRows(t *testing.T) (names []string, text map[string]string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/security.md")
	must(t, err)
	doc := string(b)
	i := strings.Index(doc, "### What a sandboxed claude sees")
	j := strings.Index(doc[max(i, 0):], "By shape of turn")
	if i < 0 || j < 0 {
		t.Fatal(`docs/security.md has no "What a sandboxed claude sees" table`)
	}
	text = map[string]string{}
	row := regexp.MustCompile(`(?m)^\| \*\*([^*]+)\*\*[^|]*\| (.*) \|$`)
	for _, m := range row.FindAllStringSubmatch(doc[i:i+j], -1) {
		names = append(names, m[1])
		text[m[1]] = m[2]
	}
	return names, text
}

// TestPolicyTableIsTheDoc: docs/security.md's table of what a sandboxed claude sees and
// Table are one list — the same rows in the same order — and what the doc spells out of a
// fixed list is the list the sandbox mounts: every system grant and scratch directory,
// every file of claude's config directory shared read-only, each named in its row.
func TestPolicyTableIsTheDoc(t *testing.T) {
	names, text := docRows(t)
	var table []string
	for _, r := range Table {
		table = append(table, r.Doc)
	}
	if !slices.Equal(names, table) {
		t.Fatalf("docs/security.md's rows %q, Table's %q", names, table)
	}
	named := func(row, p string) {
		t.Helper()
		if !strings.Contains(text[row], "`"+p+"`") && !strings.Contains(text[row], "`"+p+"/`") {
			t.Errorf("the sandbox mounts %s (%s) and docs/security.md's row does not name it", p, row)
		}
	}
	for _, g := range confine.SystemGrants() {
		if strings.HasPrefix(g, "/etc/python3") {
			continue // the doc says Debian's `python3.*/`
		}
		named("the host's own files", strings.TrimPrefix(g, "/etc/"))
	}
	for _, d := range confine.Scratch {
		named("empty", d)
	}
	for _, f := range claudeShared {
		named("read-only", f)
	}
}

// TestPolicyTable: each mount row's paths, for a direct chat and a chat in a worktree,
// land in the list of the Spec its op says and in no list that contradicts it (a path
// both writable and read-only, or hidden and shown); the rows with flags give bubblewrap
// per start exactly them, and the rows with neither are the kernel's or the runner's.
func TestPolicyTable(t *testing.T) {
	ws := t.TempDir()
	wt := filepath.Join(ws, ".clawhost", "worktrees", "lo_direct_u1")
	must(t, os.MkdirAll(wt, 0o755))
	c := Policy{Workspace: ws, Hide: []string{"/srv/data"}, Expose: []string{"/srv/data/run/agent/agent.sock"}, AddDirs: []string{"/srv/extra"}, MCPConfig: []string{"/srv/cfg/mcp.json"}}
	env := []string{"HOME=/home/bot", "CLAUDE_CONFIG_DIR=/srv/data/claude"}
	for _, l := range []Launch{
		{Tmp: "/srv/data/runner/t/1", Env: env, Media: "lo_direct_u1", MCP: "/srv/data/run/agent/mcp-1.json", ChatState: "/srv/data/runner/chats/k", Exe: "/usr/bin/claude"},
		{Tmp: "/srv/data/runner/t/2", Env: env, Worktree: wt, ChatState: "/srv/data/runner/chats/w"},
	} {
		s := SpecFor(c, l)
		lists := map[int][]string{opReadOnly: s.readOnly, opBind: s.rw, opScratch: s.scratch, opHide: s.hide}
		st := startOf(c, l)
		for _, r := range Table {
			if r.paths == nil {
				continue
			}
			ps := r.paths(st)
			if len(ps) == 0 {
				t.Errorf("row %q gives no path for %+v", r.Doc, l)
			}
			for _, p := range ps {
				if !slices.Contains(lists[r.op], p) {
					t.Errorf("row %q's %s is not in the spec's list %d", r.Doc, p, r.op)
				}
			}
		}
		for _, p := range s.rw {
			if slices.Contains(s.readOnly, p) || slices.Contains(s.hide, p) || slices.Contains(s.scratch, p) {
				t.Errorf("%s is writable and also read-only, hidden or scratch", p)
			}
		}
	}
	var flags []string
	for _, r := range Table {
		flags = append(flags, r.bwrap...)
		if r.paths != nil && r.bwrap != nil {
			t.Errorf("row %q both mounts and flags", r.Doc)
		}
	}
	argv := strings.Join(Spec{workspace: ws}.BwrapArgs(), " ")
	for _, f := range flags {
		if !strings.Contains(argv, f) {
			t.Errorf("bubblewrap per start does not get %s: %s", f, argv)
		}
	}
	for _, want := range []string{"--unshare-pid", "--unshare-ipc", "--unshare-user", "--cap-drop ALL", "--seccomp 3", "--disable-userns"} {
		if !strings.Contains(strings.Join(flags, " "), want) {
			t.Errorf("no row gives bubblewrap %s", want)
		}
	}
}
