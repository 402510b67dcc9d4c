package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/ownerclaim"
	pairingapi "github.com/clawhost/clawhost/core/pairing"
	"github.com/clawhost/clawhost/core/schedules"
	"github.com/clawhost/clawhost/core/settings"
)

const pairingUsage = `usage: clawhost pairing list [-approved] [-config FILE]
       clawhost pairing approve CODE [-config FILE]
       clawhost pairing revoke INSTANCE:ID [-config FILE]`

// pairing is `clawhost pairing list [-approved]`, `pairing approve CODE`
// and `pairing revoke INSTANCE:ID`. While clawhost runs, the database is
// locked by it: the command then goes through the admin endpoint on
// loopback; otherwise it opens the database (where, to revoke, the
// schedules are too) itself.
func pairing(at hostAt, args []string, approved bool, stdout, stderr io.Writer) int {
	ok := len(args) == 1 && args[0] == "list" ||
		len(args) == 2 && (args[0] == "approve" || args[0] == "revoke") && !approved
	if !ok {
		fmt.Fprintln(stderr, pairingUsage)
		return 2
	}
	cfg, loaded := loadForHost("pairing", at, stderr)
	if !loaded {
		return 1
	}
	verb, arg := args[0], ""
	if len(args) == 2 {
		arg = strings.TrimSpace(args[1])
	}
	if verb == "list" && approved {
		verb = "approved"
	}
	if cfg.Admin.Listen != "" {
		out, err := pairingHTTP(cfg, verb, arg)
		if err == nil {
			fmt.Fprint(stdout, out)
			return 0
		}
		// Not running (nothing listens, or it never made its token):
		// the database, below.
		if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
			return 1
		}
	}
	if cfg.Path() == "" {
		// Reached from data_dir/admin.json (or -admin) because the file
		// does not load: it does not say which database (a default SQLite
		// one would be the wrong one for PostgreSQL).
		fmt.Fprintf(stderr, "clawhost pairing: the host at %s does not answer and %s does not load: fix the file (clawhost validate), or start clawhost\n", cfg.Admin.Listen, at.config)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := settings.OpenStore(ctx, cfg, settings.HostID(cfg), nil)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost pairing: %v (if clawhost is running, enable its admin endpoint: admin { listen = %q })\n", err, config.DefaultAdminListen)
		return 1
	}
	defer db.Close()
	api := pairingapi.API{DB: db, By: "cli", Policy: pairingapi.AccessPolicy(cfg), Schedules: schedules.Stored(cfg, db), Trail: db}
	var out string
	switch verb {
	case "list":
		var codes []admin.PairingCode
		if codes, err = api.PendingPairings(ctx); err == nil {
			out = formatCodes(codes)
		}
	case "approved":
		var list []admin.ApprovedSender
		if list, err = api.ApprovedSenders(ctx); err == nil {
			out = formatApproved(list)
		}
	case "approve":
		var entry string
		if entry, err = api.ApprovePairing(ctx, arg); err == nil {
			out = "approved " + entry + "\n"
		}
	case "revoke":
		var r admin.Revocation
		if r, err = api.RevokeSender(ctx, arg); err == nil {
			out = formatRevocation(r)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "clawhost pairing: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, out)
	return 0
}

func formatCodes(codes []admin.PairingCode) string {
	if len(codes) == 0 {
		return "no pending pairing codes\n"
	}
	var b strings.Builder
	for _, c := range codes {
		fmt.Fprintf(&b, "%s  %s:%s  expires %s", c.Code, c.Instance, c.SenderID, c.ExpiresAt.Format(time.RFC3339))
		if p := c.Person(); p != "" {
			fmt.Fprintf(&b, "  %s", p)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// formatApproved renders `pairing list -approved`: one sender a line,
// with when and by whom, and the approval's state.
func formatApproved(list []admin.ApprovedSender) string {
	if len(list) == 0 {
		return "no senders approved through pairing\n"
	}
	var b strings.Builder
	for _, a := range list {
		by := a.ApprovedBy
		if by == "" {
			by = "(not recorded)"
		}
		fmt.Fprintf(&b, "%s  approved %s by %s", a.Entry, a.ApprovedAt.Format(time.RFC3339), by)
		switch {
		case !a.ExpiresAt.IsZero() && !a.Honoured && time.Now().After(a.ExpiresAt):
			fmt.Fprintf(&b, "  expired %s", a.ExpiresAt.Format(time.RFC3339))
		case !a.Honoured:
			b.WriteString(`  not honoured (dm_policy = "allowlist")`)
		case !a.ExpiresAt.IsZero():
			fmt.Fprintf(&b, "  expires %s", a.ExpiresAt.Format(time.RFC3339))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func formatRevocation(r admin.Revocation) string {
	var b strings.Builder
	if r.Found {
		fmt.Fprintf(&b, "revoked %s", r.Entry)
	} else {
		fmt.Fprintf(&b, "%s was not approved through pairing", r.Entry)
	}
	if r.Schedules > 0 {
		fmt.Fprintf(&b, "; %d schedule(s) dropped", r.Schedules)
	}
	b.WriteByte('\n')
	if len(r.Listed) > 0 {
		fmt.Fprintf(&b, "note: access.%s in the configuration still admits %s\n", strings.Join(r.Listed, " and access."), r.Entry)
	}
	return b.String()
}

// pairingHTTP lists, approves or revokes through a running clawhost's
// admin endpoint; verb is "list", "approved", "approve" or "revoke".
func pairingHTTP(cfg *config.Config, verb, arg string) (string, error) {
	switch verb {
	case "list":
		var codes []admin.PairingCode
		if err := getJSON(cfg, "/pairing", &codes); err != nil {
			return "", err
		}
		return formatCodes(codes), nil
	case "approved":
		var list []admin.ApprovedSender
		if err := getJSON(cfg, "/pairing/approved", &list); err != nil {
			return "", err
		}
		return formatApproved(list), nil
	case "approve":
		var out struct {
			Approved string `json:"approved"`
		}
		if err := postJSON(cfg, "/pairing/approve", map[string]string{"code": arg}, &out); err != nil {
			return "", err
		}
		return "approved " + out.Approved + "\n", nil
	}
	var r admin.Revocation
	if err := postJSON(cfg, "/pairing/revoke", map[string]string{"sender": arg}, &r); err != nil {
		return "", err
	}
	return formatRevocation(r), nil
}

func getJSON(cfg *config.Config, path string, v any) error {
	resp, err := adminDo(cfg, http.MethodGet, path, "", nil, 10*time.Second)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(v) != nil {
		return fmt.Errorf("admin endpoint: %s", resp.Status)
	}
	return nil
}

// postJSON posts body and decodes a 200 answer into v; another status is
// an error carrying the answer's "error".
func postJSON(cfg *config.Config, path string, body, v any) error {
	b, _ := json.Marshal(body)
	resp, err := adminDo(cfg, http.MethodPost, path, "application/json", bytes.NewReader(b), 10*time.Second)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Error == "" {
			e.Error = resp.Status
		}
		return errors.New(e.Error)
	}
	return json.Unmarshal(raw, v)
}

// ownerCodeCommand is `clawhost owner-code`: a new one-time owner code for the
// configuration's data_dir, printed once (only its salted hash is stored).
func ownerCodeCommand(inv invocation) int {
	cfg, ok := load(inv.config, inv.stderr)
	if !ok {
		return 1
	}
	code, err := ownerclaim.Create(cfg.DataDir, ownerclaim.DefaultTTL, time.Now())
	if err != nil {
		fmt.Fprintf(inv.stderr, "clawhost owner-code: %v\n", err)
		return 1
	}
	fmt.Fprintf(inv.stdout, "Send this message to the bot in a direct chat within 24 hours to become its owner:\n\n  /owner %s\n", code)
	return 0
}
