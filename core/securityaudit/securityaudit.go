// Package securityaudit is `clawhost security audit`: it looks at a
// configuration and at the machine it runs on and lists each risky
// setting with its severity, where it is, what was found and what to
// change — as OpenClaw's `security audit` does.
//
// The package knows nothing of HCL: the composer (package core) maps a
// loaded configuration onto [Input], with the file:line of each value, and
// [Run] applies the checks to it and to a [Machine] (the file system, the
// PATH, the user id, what the kernel gives claude's sandbox). Each check
// is a function of those two; the table tests hold one case per finding
// and one per near miss.
//
// The audit reports what the settings allow; it proves nothing about the
// code that enforces them, and an empty report is not a guarantee.
package securityaudit

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawhost/clawhost/core/internal/boundary"
	"github.com/clawhost/clawhost/core/internal/bubblewrap"
)

// Severity ranks a finding.
type Severity int

// Severities, from the least to the most urgent.
const (
	Info Severity = iota
	Low
	Medium
	High
	Critical
)

var severityNames = []string{"info", "low", "medium", "high", "critical"}

func (s Severity) String() string {
	if s < Info || s > Critical {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	for i, n := range severityNames {
		if n == string(b) {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q", b)
}

// Finding is one risky setting.
type Finding struct {
	// Severity ranks it.
	Severity Severity `json:"severity"`
	// Check names the check that found it, stable for scripts:
	// "access.dm_policy_open", "files.data_dir_mode", ...
	Check string `json:"check"`
	// Where is the config value's file:line, a path on the machine, or
	// empty when it is a default (not written in the file).
	Where string `json:"where,omitempty"`
	// Found says what is risky and why, never a secret's value.
	Found string `json:"found"`
	// Fix says what to change.
	Fix string `json:"fix"`
}

// Setting is one configuration value and where the file sets it ("" when
// the default applies).
type Setting struct {
	Value string
	At    string
}

// Input is what the audit reads of a configuration.
type Input struct {
	// ConfigPath is the file audited.
	ConfigPath string
	// DataDir is data_dir, resolved.
	DataDir string
	// LiteralSecrets are the secrets written out in the file rather than
	// taken from env(): Value names the setting ("plugin \"tg\" token").
	LiteralSecrets []Setting

	Access Access
	Agent  Agent
	// Agents are the agent "<id>" blocks, each with only the settings its
	// block writes itself: what it inherits is the default agent's, audited
	// there.
	Agents  []Agent
	Admin   Admin
	Plugins []Plugin
	Storage Storage
	// ToolGrants are the agents' tools settings (each agent's own or
	// inherited), the plugin tools each reaches.
	ToolGrants []ToolGrant
}

// Access is the access {} block.
type Access struct {
	DMPolicy Setting
	// Owners and Members are the entries; OwnersAt where owners is set.
	Owners   []string
	OwnersAt string
	Members  []string
	// AllowFrom are the allow_from entries, each with its position.
	AllowFrom   []Setting
	GroupPolicy Setting
	// Groups are the listed groups (groups and group blocks), GroupsAt
	// where the first is written.
	Groups         []string
	GroupsAt       string
	GroupAllowFrom []string
	// GroupRulesWithAllowFrom counts group blocks that name their own
	// allow_from.
	GroupRulesWithAllowFrom int
}

// Agent is the agent {} block, or an agent "<id>" block.
type Agent struct {
	// ID is the agent "<id>" block's id, "" for the default agent.
	ID             string
	PermissionMode Setting
	// PermissionModes are the modes /mode offers, each with its position.
	PermissionModes []Setting
	AllowedTools    []Setting
	Args            []Setting
	// Approvals is "off" or "chat"; AskOffered is whether a chat may turn
	// approvals on with /mode ask.
	Approvals  Setting
	AskOffered bool
	Approvers  Setting
	// Settings is "project" (the bot's own settings) or "user" (the
	// operator's personal Claude Code settings apply).
	Settings Setting
	// Sandbox is "auto" or "off".
	Sandbox Setting
	// RunAs is the user claude and the plugins run as when started as
	// root; empty: none.
	RunAs Setting
}

// Admin is the admin {} block.
type Admin struct {
	Listen Setting
	// Local is whether Listen is on this machine only (loopback).
	Local bool
	// TLS is whether the endpoint serves TLS (tls_cert and tls_key).
	TLS bool
}

// Plugin is one plugin block.
type Plugin struct {
	Name, Source string
	At           string // the block header
	Enabled      bool
	// Pinned is whether sha256 is set.
	Pinned bool
	// Local is whether only this machine reaches the channel (the web
	// chat listening on loopback).
	Local bool
	// Token is whether the channel asks whoever opens it for a token (the
	// web chat's access_token).
	Token bool
	// Listen is the address a plugin serves people on (the web chat's
	// listen), empty when it serves none.
	Listen Setting
	// WebhookSecret is the block's webhook_secret (Telegram's), the secret
	// a platform's webhook calls carry; Value is the secret and is never
	// printed.
	WebhookSecret Setting
}

// Storage is the storage {} block.
type Storage struct {
	Engine string
	// RemoteHost is the first database host not on this machine, empty
	// when there is none; SSLMode the sslmode in effect.
	RemoteHost string
	SSLMode    string
	At         string
}

// Machine is what the audit reads of the machine.
type Machine struct {
	// LookPath finds a program in PATH (exec.LookPath).
	LookPath func(string) (string, error)
	// UID is the user id clawhost would run as.
	UID int
	// InstallBubblewrap is the command that installs bubblewrap here
	// ("sudo apt-get install bubblewrap"); empty: unknown.
	InstallBubblewrap string
	// Boundary is what the machine gives the default agent's sandbox
	// (runner.ProbeBoundary, which the composer runs: this package reads no
	// runner); nil: not probed, and the audit says nothing of the boundary.
	Boundary *boundary.Facts
}

// Verdict is whether claude's boundary holds on m (boundary.Assess), nil
// when m's boundary was not probed.
func (m Machine) Verdict() *boundary.Verdict {
	if m.Boundary == nil {
		return nil
	}
	v := boundary.Assess(*m.Boundary)
	return &v
}

// System is the machine the audit runs on.
func System() Machine {
	return Machine{LookPath: exec.LookPath, UID: os.Getuid(), InstallBubblewrap: bubblewrap.Install()}
}

// Run applies every check and returns the findings, most severe first,
// then by place.
func Run(in Input, m Machine) []Finding {
	var out []Finding
	for _, check := range checks {
		out = append(out, check(in, m)...)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Severity != out[j].Severity {
			return out[i].Severity > out[j].Severity
		}
		return out[i].Check < out[j].Check
	})
	return out
}

// ExitCode is the audit's exit status: 1 when a finding is high or
// critical, else 0.
func ExitCode(findings []Finding) int {
	for _, f := range findings {
		if f.Severity >= High {
			return 1
		}
	}
	return 0
}

// WriteText writes the findings for people: whether claude's boundary
// holds on the machine (v, one line per part; nil: not probed), then one
// header line per finding (severity, check, place), what was found and
// what to change, then the counts.
func WriteText(w io.Writer, configPath string, findings []Finding, v *boundary.Verdict) error {
	var b strings.Builder
	fmt.Fprintf(&b, "clawhost security audit of %s\n\n", configPath)
	if v != nil {
		marks := map[boundary.Status]string{boundary.Holds: "ok     ", boundary.Weaker: "WEAKER ", boundary.Missing: "MISSING"}
		fmt.Fprintf(&b, "claude's boundary on this machine %s\n", v.Summary())
		for _, p := range v.Parts {
			fmt.Fprintf(&b, "  %s  %s: %s\n", marks[p.Status], p.Name, p.Found)
		}
		b.WriteString("\n")
	}
	for _, f := range findings {
		fmt.Fprintf(&b, "%-8s  %s", strings.ToUpper(f.Severity.String()), f.Check)
		if f.Where != "" {
			fmt.Fprintf(&b, "  (%s)", f.Where)
		}
		fmt.Fprintf(&b, "\n  found: %s\n  fix:   %s\n\n", f.Found, f.Fix)
	}
	fmt.Fprintf(&b, "%s\n", summary(findings))
	_, err := io.WriteString(w, b.String())
	return err
}

// summary counts the findings by severity: "4 findings: 1 high, 2 medium,
// 1 info; exit status 1 (high or critical found)".
func summary(findings []Finding) string {
	if len(findings) == 0 {
		return "no findings"
	}
	counts := make([]int, len(severityNames))
	for _, f := range findings {
		counts[f.Severity]++
	}
	var parts []string
	for s := Critical; s >= Info; s-- {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	noun := "findings"
	if len(findings) == 1 {
		noun = "finding"
	}
	verdict := "nothing high or critical"
	if ExitCode(findings) != 0 {
		verdict = "high or critical found"
	}
	return fmt.Sprintf("%d %s: %s (%s)", len(findings), noun, strings.Join(parts, ", "), verdict)
}

// Report is the JSON form of an audit.
type Report struct {
	Config string `json:"config"`
	// Boundary is whether claude's boundary holds on the machine; absent
	// when it was not probed.
	Boundary *boundary.Verdict `json:"boundary,omitempty"`
	Findings []Finding         `json:"findings"`
	Counts   map[string]int    `json:"counts"`
}

// WriteJSON writes the findings and the boundary's verdict v as a [Report].
func WriteJSON(w io.Writer, configPath string, findings []Finding, v *boundary.Verdict) error {
	r := Report{Config: configPath, Boundary: v, Findings: findings, Counts: map[string]int{}}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	for _, f := range findings {
		r.Counts[f.Severity.String()]++
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// fileMode is the mode of path, or false when it cannot be read.
func fileMode(path string) (fs.FileMode, bool) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	return st.Mode(), true
}

// rel shows path relative to base when it is inside it.
func rel(base, path string) string {
	if r, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.Join(filepath.Base(base), r)
	}
	return path
}
