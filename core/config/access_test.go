package config

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// TestGroupsWithoutNamedSenders: validate warns where groups can reach the
// agent but no sender of the instance is named who could trigger it.
func TestGroupsWithoutNamedSenders(t *testing.T) {
	t.Parallel()
	const plugins = `plugin "tg" { source = "telegram" }
plugin "dc" { source = "discord" }
`
	tests := []struct {
		name, access string
		warnAt       []string // "line:col" of each warning
	}{
		{"no groups", `owners = []`, nil},
		{"listed group, nobody named", `groups = ["tg:-5"]`, []string{"4:13"}},
		{"listed group, owner of another instance", `
  owners = ["dc:1"]
  groups = ["tg:-5"]`, []string{"5:13"}},
		{"listed group, owner", `
  owners = ["tg:1"]
  groups = ["tg:-5"]`, nil},
		{"listed group, allow_from", `
  allow_from = ["tg:1"]
  groups     = ["tg:-5"]`, nil},
		{"listed group, members", `
  members = ["tg:1"]
  groups  = ["tg:-5"]`, nil},
		{"listed group, open to all", `
  groups           = ["tg:-5"]
  group_allow_from = ["tg:*"]`, nil},
		{"group block, nobody named", `group "tg:-5" {}`, []string{"4:9"}},
		{"group block with its allow_from", `group "tg:-5" { allow_from = ["tg:3"] }`, nil},
		{"group block with its members", `group "tg:-5" { members = ["tg:3"] }`, nil},
		{"open groups, one instance unnamed", `
  group_policy = "open"
  owners       = ["tg:1"]`, []string{"4:18"}},
		{"groups disabled", `
  group_policy = "disabled"
  groups       = ["tg:-5"]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := plugins + "access {\n  " + strings.TrimLeft(tt.access, "\n ") + "\n}\n"
			if strings.HasPrefix(tt.access, "\n") {
				src = plugins + "access {" + tt.access + "\n}\n"
			}
			_, diags := parse([]byte(src), "c.hcl", ".", mapEnv(nil))
			if diags.HasErrors() {
				t.Fatalf("errors: %v", diags)
			}
			var got []string
			for _, d := range diags {
				if d.Severity != hcl.DiagWarning {
					continue
				}
				if d.Summary != "No sender may trigger the agent in this group" || d.Subject == nil {
					t.Errorf("warning %q at %v", d.Summary, d.Subject)
					continue
				}
				got = append(got, fmt.Sprintf("%d:%d", d.Subject.Start.Line, d.Subject.Start.Column))
			}
			if strings.Join(got, " ") != strings.Join(tt.warnAt, " ") {
				t.Errorf("warnings at %v, want %v\n%s", got, tt.warnAt, src)
			}
		})
	}
}

func TestPairingTTLAndDays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		src  string
		ok   bool
		want time.Duration
	}{
		{`access { pairing_ttl = "30d" }`, true, 30 * 24 * time.Hour},
		{`access { pairing_ttl = "1d12h" }`, true, 36 * time.Hour},
		{`access { pairing_ttl = "90m" }`, true, 90 * time.Minute},
		{`access { pairing_ttl = "0s" }`, true, 0},
		{`access { pairing_ttl = "" }`, true, 0},
		{`access { pairing_ttl = "-1d" }`, false, 0},
		{`access { pairing_ttl = "1d-1h" }`, false, 0},
		{`access { pairing_ttl = "d" }`, false, 0},
		{`access { pairing_ttl = "30days" }`, false, 0},
	}
	for _, tt := range tests {
		cfg, diags := parse([]byte(tt.src), "c.hcl", ".", mapEnv(nil))
		if diags.HasErrors() == tt.ok {
			t.Errorf("%s: diags %v, want ok=%v", tt.src, diags, tt.ok)
			continue
		}
		if tt.ok && cfg.Access.PairingTTL.Duration() != tt.want {
			t.Errorf("%s: %v, want %v", tt.src, cfg.Access.PairingTTL.Duration(), tt.want)
		}
	}
}
