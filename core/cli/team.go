package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/reports"
	"github.com/clawhost/clawhost/core/settings"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/usage"
)

const (
	usageUsage = "usage: clawhost usage [-config FILE] [-since 7d] [-by person|chat|agent|day] [-json]"
	auditUsage = "usage: clawhost audit [-config FILE] [-since 7d] [-kind KIND] [-json]"
)

// teamFlags parses the flags of `clawhost usage` and `clawhost audit`.
func teamFlags(name, usageLine string, args []string, stdout, stderr io.Writer, extra func(fs *flag.FlagSet)) (cfgPath string, since time.Duration, asJSON bool, code int) {
	fs := flag.NewFlagSet("clawhost "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	p := fs.String("config", defaultConfig(), configFlagUsage)
	s := fs.String("since", "", "how far back: 24h, 7d, 30d")
	j := fs.Bool("json", false, "print JSON for machines")
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", 0, false, help([]string{name}, stdout, stderr)
		}
		fmt.Fprintln(stderr, usageLine)
		return "", 0, false, 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "clawhost %s: unexpected argument %q\n%s\n", name, fs.Arg(0), usageLine)
		return "", 0, false, 2
	}
	if *s != "" {
		d := config.Duration(*s).Duration()
		if d <= 0 {
			fmt.Fprintf(stderr, "clawhost %s: -since %q is not a duration (24h, 7d, 30d)\n", name, *s)
			return "", 0, false, 2
		}
		since = d
	}
	return *p, since, *j, -1
}

// fromHost reads path from the running host's admin endpoint into v. ok
// false (and no error) when the host is not running or has no endpoint:
// the caller reads the database then (SQLite's is the running host's
// alone).
func fromHost(cfg *config.Config, path string, v any) (ok bool, err error) {
	if cfg.Admin.Listen == "" {
		return false, nil
	}
	err = getJSON(cfg, path, v)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// openDB opens the configuration's store, for when the host is not
// running.
func openDB(name string, cfg *config.Config, stderr io.Writer) (store.Store, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := settings.OpenStore(ctx, cfg, settings.HostID(cfg), nil)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost %s: %v (if clawhost is running, enable its admin endpoint: admin { listen = %q })\n", name, err, config.DefaultAdminListen)
		return nil, false
	}
	return db, true
}

// ledgerSince reads the usage ledger's rows since from, from the running
// host or the database.
func ledgerSince(cfg *config.Config, from time.Time, stderr io.Writer) ([]store.TurnUsage, bool) {
	var recs []admin.UsageRecord
	ok, err := fromHost(cfg, "/usage.json?since="+url.QueryEscape(from.UTC().Format(time.RFC3339Nano)), &recs)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost usage: %v\n", err)
		return nil, false
	}
	if ok {
		rows := make([]store.TurnUsage, len(recs))
		for i, r := range recs {
			rows[i] = reports.TurnUsage(r)
		}
		return rows, true
	}
	db, opened := openDB("usage", cfg, stderr)
	if !opened {
		return nil, false
	}
	defer db.Close()
	rows, err := db.ListUsage(context.Background(), store.UsageFilter{Since: from}, 0)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost usage: %v\n", err)
		return nil, false
	}
	return rows, true
}

// trailSince reads the audit trail since from (zero: all), of one kind
// ("" all), from the running host or the database.
func trailSince(cfg *config.Config, from time.Time, kind string, stderr io.Writer) ([]admin.AuditEntry, bool) {
	q := url.Values{}
	if !from.IsZero() {
		q.Set("since", from.UTC().Format(time.RFC3339Nano))
	}
	if kind != "" {
		q.Set("kind", kind)
	}
	var entries []admin.AuditEntry
	ok, err := fromHost(cfg, "/audit.json?"+q.Encode(), &entries)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost audit: %v\n", err)
		return nil, false
	}
	if ok {
		return entries, true
	}
	db, opened := openDB("audit", cfg, stderr)
	if !opened {
		return nil, false
	}
	defer db.Close()
	events, err := db.ListAudit(context.Background(), store.AuditFilter{Since: from, Kind: kind}, 0)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost audit: %v\n", err)
		return nil, false
	}
	return reports.AuditEntries(events), true
}

// usageCommand is `clawhost usage`: the usage ledger summed by person,
// chat, agent or day over a window (default 7 days), read from the
// database (the host may be running or not).
func usageCommand(args []string, stdout, stderr io.Writer) int {
	by := usage.ByPerson
	path, since, asJSON, code := teamFlags("usage", usageUsage, args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&by, "by", usage.ByPerson, "group by person, chat, agent or day")
	})
	if code >= 0 {
		return code
	}
	if !slices.Contains(usage.Bys, by) {
		fmt.Fprintf(stderr, "clawhost usage: -by %q is not one of %s\n", by, strings.Join(usage.Bys, ", "))
		return 2
	}
	if since == 0 {
		since = 7 * 24 * time.Hour
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	from := time.Now().Add(-since)
	rows, ok := ledgerSince(cfg, from, stderr)
	if !ok {
		return 1
	}
	groups := usage.Group(rows, by, cfg.Messages.Location())
	if asJSON {
		// A row's estimates and estimated_usd say how much of its cost
		// is an estimate; the total's, of all.
		type out struct {
			Since time.Time      `json:"since"`
			By    string         `json:"by"`
			Rows  []usage.Row    `json:"rows"`
			Total store.UsageSum `json:"total"`
		}
		if groups == nil {
			groups = []usage.Row{}
		}
		var total store.UsageSum
		for _, u := range rows {
			total.Add(u)
		}
		return writeJSON(stdout, stderr, "usage", out{Since: from, By: by, Rows: groups, Total: total})
	}
	fmt.Fprintf(stdout, "Usage since %s (each turn's own cost; ~ marks estimates):\n\n", from.In(cfg.Messages.Location()).Format("2006-01-02 15:04 MST"))
	if len(groups) == 0 {
		fmt.Fprintln(stdout, "No turns.")
		return 0
	}
	fmt.Fprint(stdout, usage.Table(by, groups))
	return 0
}

// auditCommand is `clawhost audit`: the audit trail, newest first, over a
// window (default: all that is kept), read from the database.
func auditCommand(args []string, stdout, stderr io.Writer) int {
	kind := ""
	path, since, asJSON, code := teamFlags("audit", auditUsage, args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&kind, "kind", "", "only this kind: pairing, revoke, tool, command, budget, rate, reload")
	})
	if code >= 0 {
		return code
	}
	cfg, ok := load(path, stderr)
	if !ok {
		return 1
	}
	var from time.Time
	if since > 0 {
		from = time.Now().Add(-since)
	}
	events, ok := trailSince(cfg, from, kind, stderr)
	if !ok {
		return 1
	}
	if asJSON {
		if events == nil {
			events = []admin.AuditEntry{}
		}
		return writeJSON(stdout, stderr, "audit", events)
	}
	if len(events) == 0 {
		fmt.Fprintln(stdout, "The audit trail is empty.")
		return 0
	}
	loc := cfg.Messages.Location()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tKIND\tBY\tCHAT\tABOUT\tDECISION\tDETAIL")
	for _, e := range events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.In(loc).Format("2006-01-02 15:04:05"), e.Kind, dash(e.Actor), dash(e.Chat), dash(e.Subject), e.Decision, oneLine(e.Detail))
	}
	tw.Flush()
	return 0
}

func writeJSON(stdout, stderr io.Writer, name string, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "clawhost %s: %v\n", name, err)
		return 1
	}
	return 0
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a detail on its line: newlines (a refused reload's
// diagnostics) become " / ", and it is cut at 160 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " / ")), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:160]) + "…"
	}
	return s
}

// reloadCommand is `clawhost reload`: the running host reloads its
// configuration file (as SIGHUP does) and says what came of it. Exit 0
// when applied (what waits for a restart is listed), 1 when refused (with
// the diagnostics), 2 when the host cannot be reached.
func reloadCommand(inv invocation) int {
	cfg, ok := loadAdmin("reload", inv.host(), inv.stderr, ", or send the process SIGHUP")
	if !ok {
		return 2
	}
	resp, err := adminDo(cfg, http.MethodPost, "/reload", "application/json", nil, 2*time.Minute)
	if err != nil {
		fmt.Fprintf(inv.stderr, "clawhost reload: %v (is clawhost running with this config?)\n", err)
		return 2
	}
	defer resp.Body.Close()
	var r admin.Reload
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil {
		fmt.Fprintf(inv.stderr, "clawhost reload: admin endpoint: %s\n", resp.Status)
		return 2
	}
	if r.Refused {
		fmt.Fprintf(inv.stdout, "refused; the running set is kept:\n%s\n", strings.TrimRight(r.Reason, "\n"))
		return 1
	}
	fmt.Fprintln(inv.stdout, "applied")
	var now []string
	for _, c := range r.Changed {
		if !slices.Contains(r.NeedsRestart, c) {
			now = append(now, c)
		}
	}
	switch {
	case len(r.Changed) == 0:
		fmt.Fprintln(inv.stdout, "nothing changed")
	case len(now) > 0:
		fmt.Fprintf(inv.stdout, "these changes apply from the next message or turn:\n  %s\n", strings.Join(now, "\n  "))
	}
	if len(r.NeedsRestart) > 0 {
		fmt.Fprintf(inv.stdout, "these changes wait for a restart of clawhost:\n  %s\n", strings.Join(r.NeedsRestart, "\n  "))
	}
	return 0
}
