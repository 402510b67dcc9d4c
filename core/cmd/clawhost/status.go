package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/metrics"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/runner"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// statusSource feeds the admin status page.
type statusSource struct {
	gw      *gateway.Gateway
	host    *pluginhost.Host
	agent   *runner.Runner
	ring    *admin.ErrorRing
	started time.Time
}

func (s *statusSource) Snapshot(ctx context.Context) admin.Snapshot {
	snap := admin.Snapshot{Version: version, StartedAt: s.started, QueueDepth: s.gw.QueueDepth(), Errors: s.ring.List()}
	for _, inst := range s.host.Instances() {
		st := inst.Status()
		p := admin.Plugin{Instance: st.Instance, Source: st.Source, State: string(st.State), LastError: st.LastError,
			Restarts: st.Restarts, PID: st.PID, Since: st.Since, Ready: st.State == pluginhost.StateReady}
		d := st.Description
		for kind, on := range map[string]bool{"channel": d.Channel, "command": d.Command, "hook": d.Hook} {
			if on {
				p.Kinds = append(p.Kinds, kind)
			}
		}
		snap.Plugins = append(snap.Plugins, p)
	}
	sessions, total := s.gw.Sessions(ctx, 200)
	snap.SessionCount = total
	for _, si := range sessions {
		snap.Sessions = append(snap.Sessions, admin.Session{Key: si.Key, SessionID: si.SessionID, Model: si.Model,
			LastActivity: si.LastMessageAt, Turns: si.Turns, InputTokens: si.Usage.InputTokens, OutputTokens: si.Usage.OutputTokens,
			CostUSD: si.CostUSD, Queued: si.Queued, Running: si.Running})
	}
	for key, pid := range s.agent.Warm() {
		snap.Warm = append(snap.Warm, admin.Warm{Key: key, PID: pid})
	}
	return snap
}

func pluginStats(h *pluginhost.Host) []metrics.PluginStat {
	var out []metrics.PluginStat
	for _, inst := range h.Instances() {
		st := inst.Status()
		out = append(out, metrics.PluginStat{Instance: st.Instance, Source: st.Source, State: string(st.State), Ready: st.State == pluginhost.StateReady, Restarts: st.Restarts})
	}
	return out
}

// pairingAPI adapts the store to the admin endpoint.
type pairingAPI struct{ db store.Pairing }

func (p pairingAPI) PendingPairings(ctx context.Context) ([]admin.PairingCode, error) {
	codes, err := p.db.PendingPairings(ctx, "")
	out := make([]admin.PairingCode, len(codes))
	for i, c := range codes {
		out[i] = admin.PairingCode{Instance: c.Instance, SenderID: c.SenderID, Code: c.Code, CreatedAt: c.CreatedAt, ExpiresAt: c.ExpiresAt}
	}
	return out, err
}

func (p pairingAPI) ApprovePairing(ctx context.Context, code string) (string, error) {
	s, err := p.db.ApprovePairing(ctx, code)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", admin.ErrNotFound
	case errors.Is(err, store.ErrExpired):
		return "", admin.ErrExpired
	case err != nil:
		return "", err
	}
	return s.Entry(), nil
}

// pairing is `clawhost pairing list` and `clawhost pairing approve CODE`.
// While clawhost runs, the database is locked by it: the command then goes
// through the admin endpoint on loopback; otherwise it opens the database
// itself.
func pairing(path string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] == "approve" && len(args) != 2) || (args[0] != "approve" && args[0] != "list") {
		fmt.Fprintln(stderr, "usage: clawhost pairing list [-config FILE]\n       clawhost pairing approve CODE [-config FILE]")
		return 2
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	code := ""
	if len(args) == 2 {
		code = strings.TrimSpace(args[1])
	}
	if cfg.Admin.Listen != "" {
		out, err := pairingHTTP(cfg.Admin.Listen, code)
		if err == nil {
			fmt.Fprint(stdout, out)
			return 0
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sqlite.Open(ctx, cfg.DataDir, sqlite.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "clawhost pairing: %v (if clawhost is running, enable its admin endpoint: admin { listen = %q })\n", err, config.DefaultAdminListen)
		return 1
	}
	defer db.Close()
	api := pairingAPI{db}
	if code == "" {
		codes, err := api.PendingPairings(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
			return 1
		}
		fmt.Fprint(stdout, formatCodes(codes))
		return 0
	}
	entry, err := api.ApprovePairing(ctx, code)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "approved %s\n", entry)
	return 0
}

func formatCodes(codes []admin.PairingCode) string {
	if len(codes) == 0 {
		return "no pending pairing codes\n"
	}
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "%s  %s:%s  expires %s\n", c.Code, c.Instance, c.SenderID, c.ExpiresAt.Format(time.RFC3339))
	}
	return b.String()
}

// pairingHTTP lists or approves through a running clawhost's admin endpoint.
func pairingHTTP(listen, code string) (string, error) {
	host, port, _ := net.SplitHostPort(listen)
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	base := "http://" + net.JoinHostPort(host, port)
	client := &http.Client{Timeout: 10 * time.Second}
	if code == "" {
		resp, err := client.Get(base + "/pairing")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		var codes []admin.PairingCode
		if err := json.NewDecoder(resp.Body).Decode(&codes); err != nil {
			return "", fmt.Errorf("admin endpoint: %s", resp.Status)
		}
		return formatCodes(codes), nil
	}
	body, _ := json.Marshal(map[string]string{"code": code})
	resp, err := client.Post(base+"/pairing/approve", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Approved string `json:"approved"`
		Error    string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusOK {
		if out.Error == "" {
			out.Error = resp.Status
		}
		return "", errors.New(out.Error)
	}
	return "approved " + out.Approved + "\n", nil
}
