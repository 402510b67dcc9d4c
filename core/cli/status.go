package cli

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/internal/qrcode"
)

// status is `clawhost status`: the running host's plugins with their
// state, last error and what to do, a refused last reload with its
// diagnostics and, with a shared database, the hosts and their leases,
// read from its admin endpoint. Exit 0 when every plugin and the agent
// are ready, one plugin is a channel, the store is not degraded and the
// last reload was not refused, 1 otherwise, 2 when the host cannot be reached (not running, or
// admin disabled).
func status(at hostAt, stdout, stderr io.Writer) int {
	cfg, ok := loadAdmin("status", at, stderr, "")
	if !ok {
		return 2
	}
	snap, err := FetchStatus(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost status: %v (is clawhost running with this config?)\n", err)
		return 2
	}
	fmt.Fprint(stdout, formatStatus(snap, time.Now()))
	if r := snap.LastReload; r != nil && r.Refused {
		return 1
	}
	if a := snap.Agent; a != nil && !a.Ready {
		return 1
	}
	if st := snap.Store; st != nil && st.State != "ok" {
		return 1
	}
	if c := snap.Channels; c != nil && c.State != admin.ChannelsOK {
		return 1
	}
	for _, p := range snap.Plugins {
		// A channel in standby is served by another host: not a failure.
		if !p.Ready && p.State != "standby" {
			return 1
		}
	}
	return 0
}

// FetchStatus reads /status.json from the admin endpoint of the host cfg
// configures, with its admin token (what `clawhost status` shows).
func FetchStatus(cfg *config.Config) (admin.Snapshot, error) {
	var snap admin.Snapshot
	resp, err := adminDo(cfg, http.MethodGet, "/status.json", "", nil, 10*time.Second)
	if err != nil {
		return snap, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return snap, fmt.Errorf("admin endpoint: %s", resp.Status)
	}
	return snap, json.NewDecoder(resp.Body).Decode(&snap)
}

// adminDo sends one request to the running host's admin endpoint with the
// token of <data_dir>/admin.token in the Authorization header. The error
// wraps fs.ErrNotExist when the token file is missing (the host never
// started with this data directory) and syscall.ECONNREFUSED when nothing
// listens.
func adminDo(cfg *config.Config, method, path, contentType string, body io.Reader, timeout time.Duration) (*http.Response, error) {
	token, err := admin.ReadToken(admin.TokenPath(cfg.DataDir))
	if err != nil {
		return nil, err
	}
	base, tr, err := adminBase(cfg.Admin)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return (&http.Client{Timeout: timeout, Transport: tr}).Do(req)
}

// adminBase is the URL of the admin endpoint for its settings (an
// unspecified host means loopback) and the transport to reach it: with
// TLS, one that also trusts the configured certificate itself (a
// self-signed one, usually).
func adminBase(a *config.Admin) (string, http.RoundTripper, error) {
	host, port, _ := net.SplitHostPort(a.Listen)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	if a.TLSCert == "" {
		return "http://" + net.JoinHostPort(host, port), nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	pem, err := os.ReadFile(a.TLSCert)
	if err != nil {
		return "", nil, fmt.Errorf("admin endpoint certificate: %w", err)
	}
	pool.AppendCertsFromPEM(pem)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return "https://" + net.JoinHostPort(host, port), tr, nil
}

// formatStatus renders a snapshot for the terminal.
func formatStatus(s admin.Snapshot, now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "clawhost %s, up %s, %d sessions, %d queued\n", s.Version, now.Sub(s.StartedAt).Round(time.Second), s.SessionCount, s.QueueDepth)
	if s.Sandbox != "" {
		fmt.Fprintf(&b, "sandbox: %s\n", s.Sandbox)
	}
	writeHealth(&b, s, now)
	for _, p := range s.PendingPairings {
		fmt.Fprintf(&b, "waiting for an owner: %s (code %s, until %s): clawhost pairing approve %s\n", p.Who(), p.Code, p.ExpiresAt.Local().Format("15:04"), p.Code)
	}
	if n := len(s.ApprovedSenders); n > 0 {
		fmt.Fprintf(&b, "approved through pairing: %d (clawhost pairing list -approved)\n", n)
	}
	if p := s.Paused; p != nil {
		fmt.Fprintf(&b, "PAUSED until %s (%s): claude's limit was reached; messages are kept and run once each at the reset. To retry now: /resume from an owner in a chat.\n",
			p.Until.Local().Format("2006-01-02 15:04 MST"), strings.ReplaceAll(p.Reason, "_", " "))
	}
	writeMemory(&b, s)
	if len(s.Agents) > 1 {
		b.WriteString("agents:\n")
		for _, a := range s.Agents {
			bound := "every chat no agent binds"
			if len(a.Chats) > 0 {
				bound = strings.Join(a.Chats, ", ")
			}
			switchable := ""
			if a.Switchable {
				switchable = ", switchable"
			}
			fmt.Fprintf(&b, "  %-14s %s: %s%s, %d warm\n", a.ID, a.Workspace, bound, switchable, a.Warm)
		}
	}
	ready := 0
	for _, p := range s.Plugins {
		if p.Ready {
			ready++
		}
	}
	if r := s.LastReload; r != nil && r.Refused {
		fmt.Fprintf(&b, "the last reload (%s) was refused; the running set is kept. Fix the file (clawhost validate), then reload:\n%s\n",
			r.At.Local().Format("2006-01-02 15:04:05"), "    "+indent(strings.TrimRight(r.Reason, "\n"), "    "))
	} else if r != nil && len(r.NeedsRestart) > 0 {
		fmt.Fprintf(&b, "the last reload (%s) was applied; these changes wait for a restart of clawhost: %s\n",
			r.At.Local().Format("2006-01-02 15:04:05"), strings.Join(r.NeedsRestart, "; "))
	}
	fmt.Fprintf(&b, "plugins ready %d/%d\n", ready, len(s.Plugins))
	for _, p := range s.Plugins {
		fmt.Fprintf(&b, "  %-14s %-10s %-14s restarts %d", p.Instance, p.Source, p.State, p.Restarts)
		if p.RSS > 0 {
			fmt.Fprintf(&b, ", pid %d, %s (%s private)", p.PID, admin.MB(p.RSS), admin.MB(p.Private))
		}
		b.WriteString("\n")
		if p.LastError != "" && !p.Ready {
			fmt.Fprintf(&b, "      error: %s\n", indent(p.LastError, "        "))
		}
		if p.Action != "" {
			fmt.Fprintf(&b, "      what to do: %s\n", p.Action)
		}
		if p.Attention != nil {
			writeAttention(&b, p.Instance, *p.Attention, now)
		}
	}
	for _, p := range s.Disabled {
		fmt.Fprintf(&b, "  %-14s %-10s not enabled: %s\n", p.Instance, p.Source, p.Why)
	}
	if c := s.Cluster; c != nil {
		writeCluster(&b, *c, now)
	}
	for _, a := range s.Approvals {
		who := "an owner"
		if a.Asker != "" {
			who = a.Asker + " or an owner"
		}
		fmt.Fprintf(&b, "waiting for approval: %s wants %s (%s) for %s; what to do: %s answers in the chat (Allow / Deny), or agent.approval_timeout denies it\n",
			a.Session, a.Tool, firstLine(a.Summary), now.Sub(a.Since).Round(time.Second), who)
	}
	for _, a := range s.Attached {
		state := "attached"
		if a.Waiting {
			state = "waiting for its terminal to reconnect (the host restarted)"
		}
		fmt.Fprintf(&b, "terminal attached: %s (session %s, terminal session %s) since %s ago, %d answered: %s; /detach in the chat lets it go\n",
			a.Chat, a.Session, cmp.Or(a.TerminalSession, "unknown"), now.Sub(a.Since).Round(time.Second), a.Answered, state)
	}
	if len(s.UnlistedGroups) > 0 {
		fmt.Fprintf(&b, "groups that wrote but access.groups does not list (no answer there); to answer, add the id to access.groups and reload:\n")
		for _, g := range s.UnlistedGroups {
			title := ""
			if g.Title != "" {
				title = " (" + g.Title + ")"
			}
			fmt.Fprintf(&b, "  %q%s: %d messages, last %s ago\n", g.ID, title, g.Messages, now.Sub(g.LastSeen).Round(time.Second))
		}
	}
	return b.String()
}

// writeMemory writes what the host, its plugins and the warm claude
// processes hold, and the warm pool's limit and first-answer times.
func writeMemory(b *strings.Builder, s admin.Snapshot) {
	if s.Host.RSS > 0 {
		fmt.Fprintf(b, "memory: host %s resident, %s private (Go heap %s)", admin.MB(s.Host.RSS), admin.MB(s.Host.Private), admin.MB(s.Host.Heap))
		total, private := s.Host.RSS, s.Host.Private
		for _, p := range s.Plugins {
			total, private = total+p.RSS, private+p.Private
		}
		for _, w := range s.Warm {
			total, private = total+w.RSS, private+w.Private
		}
		fmt.Fprintf(b, "; with plugins and %d warm claude processes %s resident, %s private\n", len(s.Warm), admin.MB(total), admin.MB(private))
	}
	if t := s.Host.ProcsText(); t != "" {
		fmt.Fprintf(b, "host processors: %s\n", t)
	}
	if w := s.WarmPool; w != nil {
		spare := ""
		if w.Spares > 0 || w.SparesAdopted > 0 {
			spare = fmt.Sprintf(" (%d spare, %d adopted by a new session)", w.Spares, w.SparesAdopted)
		}
		fmt.Fprintf(b, "warm claude: %d%s holding %s, limit %s\n", w.Warm, spare, admin.MB(w.Memory), w.Limits())
		fmt.Fprintf(b, "first answer of a returning chat: warm %s; cold %s\n", w.FirstAnswerWarm, w.FirstAnswerCold)
		if w.SpareError != "" {
			fmt.Fprintf(b, "spare claude: FAILING: %s\n  to do: %s\n", w.SpareError, admin.SpareAction)
		}
	}
}

// writeHealth writes the channels', the agent's and the store's items and
// the failing checks of the last doctor run from the status page.
func writeHealth(b *strings.Builder, s admin.Snapshot, now time.Time) {
	if c := s.Channels; c != nil && c.State != admin.ChannelsOK {
		fmt.Fprintf(b, "channels: NONE: %s\n  to do: %s\n", c.LastError, c.Action)
	}
	if a := s.Agent; a != nil {
		if a.Ready {
			fmt.Fprintf(b, "agent: ready, claude %s at %s", dash(a.Version), a.Path)
			if a.Auth != "" {
				fmt.Fprintf(b, ", logged in with %s", strings.ReplaceAll(a.Auth, "_", " "))
			}
			if a.Action != "" {
				fmt.Fprintf(b, " (%s)", a.Action)
			}
			b.WriteString("\n")
		} else {
			fmt.Fprintf(b, "agent: NOT READY (%s): %s\n  to do: %s\n", a.State, a.LastError, a.Action)
		}
	}
	if st := s.Store; st != nil && st.State != "ok" {
		fmt.Fprintf(b, "store: DEGRADED since %s, %d failed writes: %s\n  to do: %s\n", st.Since.Local().Format("15:04:05"), st.Errors, st.LastError, st.Action)
	}
	if d := s.Doctor; d != nil && !d.At.IsZero() && d.Failed() > 0 {
		fmt.Fprintf(b, "checks (clawhost doctor, run from the status page %s ago): %d fail\n", now.Sub(d.At).Round(time.Second), d.Failed())
		for _, c := range d.Checks {
			if c.Verdict == "fail" {
				fmt.Fprintf(b, "  FAIL %s: %s\n    to do: %s\n", c.Name, c.Found, c.Do)
			}
		}
	}
}

// writeCluster writes the hosts sharing the database, then the other
// leases by holder, each with how it stands: an expired host is named as
// such, with what that means.
func writeCluster(b *strings.Builder, c admin.Cluster, now time.Time) {
	if c.Error != "" {
		fmt.Fprintf(b, "hosts (this host %s, %s): the leases could not be read: %s\n", c.HostID, c.Engine, c.Error)
		return
	}
	fmt.Fprintf(b, "hosts live %d/%d (this host %s, sharing one %s database)\n", c.LiveHosts(), len(c.Hosts), c.HostID, c.Engine)
	for _, h := range c.Hosts {
		id := h.ID
		if h.This {
			id += " (this host)"
		}
		state := "live, " + admin.LeaseState(h.Live, h.Expires, now)
		if !h.Live {
			state = admin.LeaseState(h.Live, h.Expires, now) + " — its work is taken over by the other hosts"
		}
		fmt.Fprintf(b, "  %-14s %s, %d sessions\n", id, state, h.Sessions)
		fmt.Fprintf(b, "      up since %s (%s), renewed %s ago, epoch %d", h.Since.Local().Format("2006-01-02 15:04:05"), admin.Ago(h.Since, now), admin.Ago(h.Renewed, now), h.Epoch)
		if h.PID != 0 {
			fmt.Fprintf(b, ", pid %d", h.PID)
		}
		if h.Admin != "" {
			fmt.Fprintf(b, ", admin %s", h.Admin)
		}
		if h.Version != "" {
			fmt.Fprintf(b, ", version %s", h.Version)
		}
		b.WriteString("\n")
	}
	if len(c.Leases) == 0 {
		return
	}
	b.WriteString("leases\n")
	for _, l := range c.Leases {
		state := admin.LeaseState(l.Live, l.Expires, now)
		if l.Live {
			state = "renewed " + admin.Ago(l.Renewed, now) + " ago, " + state
		}
		fmt.Fprintf(b, "  %s held by %s, %s, epoch %d\n", l.Name, l.Holder, state, l.Epoch)
	}
}

// firstLine is the first line of s.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// attentionIndent indents what a plugin asks for under its line.
const attentionIndent = "      "

// writeAttention writes what a plugin that needs attention asks for: a QR
// code drawn in the terminal, a code or a link as text, the expiry, and the
// command that performs its retry.
func writeAttention(b *strings.Builder, instance string, a admin.Attention, now time.Time) {
	switch a.Kind {
	case "qr":
		art, err := qrcode.Terminal(a.Data, attentionIndent)
		if err != nil {
			fmt.Fprintf(b, "%sthe QR code cannot be drawn (%v); open the status page\n", attentionIndent, err)
			break
		}
		fmt.Fprintf(b, "%sscan this QR code:\n%s", attentionIndent, art)
	case "code":
		fmt.Fprintf(b, "%scode: %s\n", attentionIndent, a.Data)
	case "link":
		fmt.Fprintf(b, "%sopen: %s\n", attentionIndent, a.Data)
	default:
		fmt.Fprintf(b, "%s%s: %s\n", attentionIndent, a.Kind, a.Data)
	}
	if !a.ExpiresAt.IsZero() {
		if left := a.ExpiresAt.Sub(now); left > 0 {
			fmt.Fprintf(b, "%svalid until %s (%s left); run clawhost status again for a newer one\n", attentionIndent, a.ExpiresAt.Local().Format("15:04:05"), left.Round(time.Second))
		} else {
			fmt.Fprintf(b, "%sexpired %s ago; run clawhost status again for a newer one\n", attentionIndent, (-left).Round(time.Second))
		}
	}
	if a.Retry != "" {
		fmt.Fprintf(b, "%s%s: clawhost retry %s\n", attentionIndent, a.Retry, instance)
	}
}

// indent prefixes every line of s but the first with prefix.
func indent(s, prefix string) string {
	return strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// healthcheckCommand is `clawhost healthcheck`: GET /healthz of the running host (a
// container's HEALTHCHECK: the image has no curl). Exit 0 when it answers 200 (every
// enabled plugin ready, one a channel), 1 otherwise, with the answer or the error on stderr.
func healthcheckCommand(inv invocation) int {
	cfg, ok := loadAdmin("healthcheck", inv.host(), inv.stderr, "")
	if !ok {
		return 1
	}
	resp, err := adminDo(cfg, http.MethodGet, "/healthz", "", nil, 5*time.Second)
	if err != nil {
		fmt.Fprintf(inv.stderr, "clawhost healthcheck: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(inv.stderr, "clawhost healthcheck: %s %s\n", resp.Status, strings.TrimSpace(string(body)))
		return 1
	}
	return 0
}
