package config

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestNestingLimit: brackets, strings, interpolations, blocks and operators
// count as levels; what strings, comments and heredocs hold does not, nor
// operators of separate expressions.
func TestNestingLimit(t *testing.T) {
	t.Parallel()
	rep := strings.Repeat
	for _, tc := range []struct {
		name string
		src  string
		at   string // line:col of the refusal; "" when accepted
	}{
		{"64 lists", "a = " + rep("[", 64) + rep("]", 64), ""},
		{"65 lists", "a = " + rep("[", 65) + rep("]", 65), "1:69"},
		{"65 mixed", "a = " + rep("[{(", 22) + rep(")}]", 22), "1:69"},
		{"65 blocks", rep("b {\n", 65) + rep("}\n", 65), "65:3"},
		{"in a string", `a = "` + rep("[", 100) + `"`, ""},
		{"in comments", "# " + rep("{", 100) + "\n// " + rep("(", 100) + "\n/* " + rep("[", 100) + " */\na = 1", ""},
		{"in a heredoc", "a = <<EOT\n" + rep("[", 100) + "\nEOT\n", ""},
		{"interpolations", "a = " + rep(`"${`, 33) + "1" + rep(`}"`, 33), "1:101"},
		{"unary operators", "a = " + rep("!", 65) + "true", "1:69"},
		{"conditionals", "a = " + rep("x ? 1 : ", 65) + "2", "1:519"},
		{"operators of many attributes", rep("a = 1 + 1 + 1 + 1\n", 100), ""},
		{"operators of many elements", "a = [" + rep("-1, ", 100) + "]", ""},
		{"operators of many object items", "a = {\n" + rep("  k = !true\n", 100) + "}", ""},
		{"unbalanced closers", rep("]})", 100) + "\na = " + rep("[", 64), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diags := checkLimits([]byte(tc.src), "n.hcl")
			switch {
			case tc.at == "" && diags.HasErrors():
				t.Fatalf("refused: %s", diags.Error())
			case tc.at == "":
				return
			case len(diags) != 1 || diags[0].Subject == nil:
				t.Fatalf("want one diagnostic with a subject, got %v", diags)
			}
			d := diags[0]
			if got := posString(d.Subject.Start); got != tc.at || d.Summary != "Configuration nested too deeply" {
				t.Errorf("%q at %s, want at %s", d.Summary, got, tc.at)
			}
		})
	}
}

func posString(p hcl.Pos) string { return strings.TrimPrefix(pos(hcl.Range{Start: p}), ":") }

// TestSizeLimit: a file of MaxFileSize bytes is read; one byte more is
// refused at the byte past the limit.
func TestSizeLimit(t *testing.T) {
	t.Parallel()
	line := "# " + strings.Repeat("x", 97) + "\n" // 100 bytes
	src := []byte(strings.Repeat(line, MaxFileSize/100+1))
	if d := checkLimits(src[:MaxFileSize], "s.hcl"); d.HasErrors() {
		t.Fatalf("at the limit: %s", d.Error())
	}
	d := checkLimits(src[:MaxFileSize+1], "s.hcl")
	if len(d) != 1 || d[0].Summary != "Configuration file too large" {
		t.Fatalf("over the limit: %v", d)
	}
	wantLine, wantCol := MaxFileSize/100+1, MaxFileSize%100+1
	if s := d[0].Subject.Start; s.Line != wantLine || s.Column != wantCol || s.Byte != MaxFileSize {
		t.Errorf("subject %+v, want line %d col %d", s, wantLine, wantCol)
	}
}

// TestProbePlugins: the plugins validate still starts are those whose label
// and launch attributes have no error, whatever else is wrong.
func TestProbePlugins(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      string // instance names, in file order
	}{
		{"errors elsewhere", `
log_level = "loud"
plugin "ok" {
  source     = "a"
  queue_mode = "x"
  text_limit = 0
  typo       = 1
}
plugin "off" {
  source  = "a"
  enabled = false
}
plugin "badsha" {
  source = "a"
  sha256 = "zz"
}
plugin "Bad Name" { source = "a" }
plugin "ok" { source = "b" }
plugin "badtimeout" {
  source        = "a"
  start_timeout = "soon"
}
plugin "badenabled" {
  source  = "a"
  enabled = env("UNSET_VARIABLE")
}
plugin "badsource" { source = "A B" }
plugin "nosource" {}
plugin "last" { source = "c" }
`, "ok last"},
		{"bad plugin_dir", `
plugin_dir = ["x"]
plugin "default" { source = "a" }
plugin "own" {
  source = "a"
  path   = "/opt/a"
}
`, "own"},
		{"syntax error", `plugin "a" { source = "a" }` + "\nb = [", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := parse([]byte(tc.src), "p.hcl", "/etc/clawhost", lookupTestEnv)
			if !diags.HasErrors() {
				t.Fatal("want errors")
			}
			var got []string
			for _, p := range cfg.ProbePlugins(diags) {
				got = append(got, p.Name)
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("probed %q, want %q", got, tc.want)
			}
		})
	}
}
