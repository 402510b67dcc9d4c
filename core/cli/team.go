package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawhost/clawhost/core"
	"github.com/clawhost/clawhost/core/config"
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
	p := fs.String("config", "config.hcl", configFlagUsage)
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

// openForReport loads the configuration and opens its store (the running
// host's database: SQLite's file or the shared PostgreSQL).
func openForReport(name, path string, stderr io.Writer) (*config.Config, store.Store, bool) {
	cfg, ok := load(path, stderr)
	if !ok {
		return nil, nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := core.OpenStore(ctx, cfg, core.HostID(cfg), nil)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost %s: %v\n", name, err)
		return nil, nil, false
	}
	return cfg, db, true
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
	cfg, db, ok := openForReport("usage", path, stderr)
	if !ok {
		return 1
	}
	defer db.Close()
	from := time.Now().Add(-since)
	rows, err := db.ListUsage(context.Background(), store.UsageFilter{Since: from}, 0)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost usage: %v\n", err)
		return 1
	}
	groups := usage.Group(rows, by, cfg.Messages.Location())
	if asJSON {
		type out struct {
			Since time.Time   `json:"since"`
			By    string      `json:"by"`
			Rows  []usage.Row `json:"rows"`
		}
		if groups == nil {
			groups = []usage.Row{}
		}
		return writeJSON(stdout, stderr, "usage", out{Since: from, By: by, Rows: groups})
	}
	fmt.Fprintf(stdout, "Usage since %s (as claude reports it):\n\n", from.In(cfg.Messages.Location()).Format("2006-01-02 15:04 MST"))
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
	cfg, db, ok := openForReport("audit", path, stderr)
	if !ok {
		return 1
	}
	defer db.Close()
	f := store.AuditFilter{Kind: kind}
	if since > 0 {
		f.Since = time.Now().Add(-since)
	}
	events, err := db.ListAudit(context.Background(), f, 0)
	if err != nil {
		fmt.Fprintf(stderr, "clawhost audit: %v\n", err)
		return 1
	}
	if asJSON {
		type row struct {
			At       time.Time `json:"at"`
			Kind     string    `json:"kind"`
			Actor    string    `json:"actor"`
			Instance string    `json:"instance,omitempty"`
			ChatID   string    `json:"chat_id,omitempty"`
			Subject  string    `json:"subject"`
			Decision string    `json:"decision"`
			Detail   string    `json:"detail,omitempty"`
		}
		out := make([]row, len(events))
		for i, e := range events {
			out[i] = row{At: e.At, Kind: e.Kind, Actor: e.Actor, Instance: e.Instance, ChatID: e.ChatID, Subject: e.Subject, Decision: e.Decision, Detail: e.Detail}
		}
		return writeJSON(stdout, stderr, "audit", out)
	}
	if len(events) == 0 {
		fmt.Fprintln(stdout, "The audit trail is empty.")
		return 0
	}
	loc := cfg.Messages.Location()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WHEN\tKIND\tBY\tCHAT\tABOUT\tDECISION\tDETAIL")
	for _, e := range events {
		chat := "-"
		if e.ChatID != "" {
			chat = e.Instance + ":" + e.ChatID
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.At.In(loc).Format("2006-01-02 15:04:05"), e.Kind, dash(e.Actor), chat, dash(e.Subject), e.Decision, oneLine(e.Detail))
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
