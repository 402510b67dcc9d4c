package admin

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ledgerReports is a Reports over fixed rows, as the store would answer.
type ledgerReports struct {
	usage []UsageRecord
	audit []AuditEntry // newest first
	since []time.Time  // the since of each Usage call
}

func (l *ledgerReports) Usage(_ context.Context, since time.Time) ([]UsageRecord, error) {
	l.since = append(l.since, since)
	var out []UsageRecord
	for _, u := range l.usage {
		if !u.At.Before(since) {
			out = append(out, u)
		}
	}
	return out, nil
}

func (l *ledgerReports) Audit(_ context.Context, since time.Time, kind string) ([]AuditEntry, error) {
	var out []AuditEntry
	for _, e := range l.audit {
		if !e.At.Before(since) && (kind == "" || e.Kind == kind) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (l *ledgerReports) Sessions(context.Context) ([]SessionRow, error) { return nil, nil }

// historyNow is the injected clock of the history tests: the 20th, in
// a zone 5 hours east of UTC.
var (
	historyZone = time.FixedZone("UTC+5", 5*3600)
	historyNow  = time.Date(2026, 11, 20, 10, 0, 0, 0, historyZone)
)

func historyLedger() *ledgerReports {
	at := func(day, hour int) time.Time { return time.Date(2026, 11, day, hour, 0, 0, 0, historyZone) }
	return &ledgerReports{usage: []UsageRecord{
		{At: at(1, 9), Agent: "main", Instance: "tg", ChatID: "1", Sender: "tg:1", CostUSD: 0.5},   // this month, before the 7-day period
		{At: at(18, 9), Agent: "main", Instance: "tg", ChatID: "1", Sender: "tg:1", CostUSD: 0.25}, // in it
		{At: at(18, 23), Agent: "ops", Instance: "tg", ChatID: "2", Sender: "tg:2", CostUSD: 0.125},
		{At: at(20, 1), Agent: "main", Instance: "tg", ChatID: "1", Sender: "tg:1", CostUSD: 0.875}, // today: 0.875 of a 1.00 budget
		{At: at(20, 2), Agent: "ops", Instance: "tg", ChatID: "1", Sender: "tg:2", CostUSD: 0.0625},
	}}
}

func startHistory(t *testing.T, l *ledgerReports) *Server {
	return start(t, Options{Source: &fakeSource{}, Reports: l, Location: historyZone, Now: func() time.Time { return historyNow },
		Budgets: func() []Budget {
			return []Budget{{Scope: "person", LimitUSD: 1, WarnAt: 0.8}, {Scope: "agent", Agent: "main", LimitUSD: 10, WarnAt: 0.8}}
		}})
}

func TestUsageDailyJSON(t *testing.T) {
	t.Parallel()
	l := historyLedger()
	s := startHistory(t, l)
	body, _ := get(t, s, "/usage/daily.json?days=7")
	var d Daily
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Days) != 7 || d.Days[0] != "2026-11-14" || d.Days[6] != "2026-11-20" {
		t.Errorf("days %v, want the 7 days to the 20th", d.Days)
	}
	// The period's first day in the zone, and the month's start for the
	// agent's budget: the earlier is asked.
	if want := time.Date(2026, 11, 1, 0, 0, 0, 0, historyZone); !l.since[0].Equal(want) {
		t.Errorf("asked the ledger since %v, want %v", l.since[0], want)
	}
	if len(d.Series) != 2 || d.Series[0].Key != "tg:1" || d.Series[1].Key != "tg:2" {
		t.Fatalf("series %+v, want tg:1 then tg:2 (costliest first)", d.Series)
	}
	if got := d.Series[0].CostUSD; got[4] != 0.25 || got[6] != 0.875 || sum(got) != 1.125 {
		t.Errorf("tg:1's cost per day %v", got)
	}
	if got := d.Series[1].Turns; got[4] != 1 || got[6] != 1 {
		t.Errorf("tg:2's turns per day %v (23:00 on the 18th in the zone is the 18th)", got)
	}
	if len(d.Budgets) != 1 || d.Budgets[0].Scope != "person" {
		t.Errorf("budgets of the person chart %+v", d.Budgets)
	}
	if len(d.Near) != 1 || d.Near[0].Key != "tg:1" || d.Near[0].SpentUSD != 0.875 || d.Near[0].Over {
		t.Errorf("near %+v, want tg:1 at 0.875 of 1.00, not over", d.Near)
	}

	// A filter narrows: the agent ops, by chat.
	_, body, _ = do(t, s, request{path: "/usage/daily.json?days=7&by=chat&agent=ops"})
	d = Daily{}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != 2 || sum(d.Series[0].CostUSD)+sum(d.Series[1].CostUSD) != 0.1875 {
		t.Errorf("ops by chat: %+v", d.Series)
	}
	if strings.Join(d.Keys["agent"], ",") != "main,ops" {
		t.Errorf("the filter's agents %v", d.Keys["agent"])
	}

	// An empty ledger is an empty list, not null (the page's script
	// reads it as a list).
	empty := startHistory(t, &ledgerReports{})
	if _, body, _ := do(t, empty, request{path: "/usage/daily.json"}); !strings.Contains(body, `"series": []`) {
		t.Errorf("an empty ledger: %s", body)
	}

	for _, bad := range []string{"by=day", "days=0", "days=91", "days=x"} {
		if code, body, _ := do(t, s, request{path: "/usage/daily.json?" + bad}); code != http.StatusBadRequest {
			t.Errorf("%s: status %d %s, want 400", bad, code, body)
		}
	}
}

// TestUsageDailyCSV: the CSV holds every ledger row of the period, summed
// by day and person, to the last digit.
func TestUsageDailyCSV(t *testing.T) {
	t.Parallel()
	s := startHistory(t, historyLedger())
	code, body, hdr := do(t, s, request{path: "/usage/daily.csv?days=30"})
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/csv") {
		t.Fatalf("status %d %q: %s", code, hdr.Get("Content-Type"), body)
	}
	if cd := hdr.Get("Content-Disposition"); !strings.Contains(cd, "clawhost-usage-by-person-2026-11-20.csv") {
		t.Errorf("Content-Disposition %q", cd)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"day", "person", "turns", "cost_usd"},
		{"2026-11-01", "tg:1", "1", "0.5"}, {"2026-11-18", "tg:1", "1", "0.25"}, {"2026-11-18", "tg:2", "1", "0.125"},
		{"2026-11-20", "tg:1", "1", "0.875"}, {"2026-11-20", "tg:2", "1", "0.0625"}}
	if len(recs) != len(want) {
		t.Fatalf("CSV\n%s\nwant %v", body, want)
	}
	for i := range want {
		if strings.Join(recs[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("line %d: %v, want %v", i, recs[i], want[i])
		}
	}
}

func TestUsageDailyNeedsToken(t *testing.T) {
	t.Parallel()
	s := startHistory(t, historyLedger())
	for _, p := range []string{"/usage/daily.json", "/usage/daily.csv", "/audit/search.json", "/assets/ops.js"} {
		if code, _, _ := do(t, s, request{path: p, header: map[string]string{"Authorization": ""}}); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d, want 401", p, code)
		}
	}
}

func TestAuditSearch(t *testing.T) {
	t.Parallel()
	l := &ledgerReports{}
	for i := range 60 {
		e := AuditEntry{At: historyNow.Add(-time.Duration(i) * time.Hour), Kind: "command", Actor: "tg:1", Chat: "tg:1", Subject: "/status", Decision: "allowed"}
		if i%2 == 1 {
			e.Kind, e.Actor, e.Subject = "pairing", "tg:2", "code"
		}
		if i == 41 {
			e.Detail = "the Needle in the trail"
		}
		l.audit = append(l.audit, e)
	}
	s := startHistory(t, l)
	get := func(q string) AuditPage {
		t.Helper()
		code, body, _ := do(t, s, request{path: "/audit/search.json?" + q})
		if code != http.StatusOK {
			t.Fatalf("%s: status %d %s", q, code, body)
		}
		var p AuditPage
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := get("")
	if p.Total != 60 || p.Pages != 3 || len(p.Rows) != 25 || !p.Rows[0].At.Equal(historyNow) || strings.Join(p.Kinds, ",") != "command,pairing" {
		t.Errorf("first page: total %d pages %d rows %d first %v kinds %v", p.Total, p.Pages, len(p.Rows), p.Rows[0].At, p.Kinds)
	}
	if p := get("page=3"); len(p.Rows) != 10 || !p.Rows[9].At.Equal(historyNow.Add(-59*time.Hour)) {
		t.Errorf("last page: %d rows", len(p.Rows))
	}
	if p := get("q=needle"); p.Total != 1 || p.Rows[0].Detail != "the Needle in the trail" {
		t.Errorf("search: %+v", p)
	}
	if p := get("who=tg:2&kind=pairing"); p.Total != 30 {
		t.Errorf("who and kind: %d rows, want 30", p.Total)
	}
	// A day is the zone's: the 20th is 00:00 to 10:00 there, 11 rows.
	if p := get("since=2026-11-20&until=2026-11-20"); p.Total != 11 {
		t.Errorf("the 20th: %d rows, want 11", p.Total)
	}
	for _, bad := range []string{"page=0", "per=1000", "since=yesterday"} {
		if code, _, _ := do(t, s, request{path: "/audit/search.json?" + bad}); code != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", bad, code)
		}
	}
}

func TestAssetsServed(t *testing.T) {
	t.Parallel()
	s := startHistory(t, historyLedger())
	for p, ct := range map[string]string{"/assets/uPlot.iife.min.js": "text/javascript", "/assets/ops.css": "text/css", "/assets/uPlot.LICENSE": "text/plain"} {
		code, body, hdr := do(t, s, request{path: p})
		if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), ct) || len(body) == 0 {
			t.Errorf("%s: %d %q", p, code, hdr.Get("Content-Type"))
		}
	}
	if code, _, _ := do(t, s, request{path: "/assets/..%2fadmin.go"}); code != http.StatusNotFound {
		t.Errorf("a path out of the assets: %d, want 404", code)
	}
}

// TestVendoredUPlotIsTheMakefiles: the embedded uPlot is the version the
// Makefile's uplot target fetches and checks.
func TestVendoredUPlotIsTheMakefiles(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^UPLOT_VERSION := (\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no UPLOT_VERSION")
	}
	js, err := assets.ReadFile("assets/uPlot.iife.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if want := "uPlot (v" + string(m[1]) + ")"; !strings.HasPrefix(string(js), "/*! https://github.com/leeoniya/uPlot (v"+string(m[1])+") */") {
		t.Errorf("the embedded uPlot is not %s: it begins %q", want, js[:60])
	}
}

// TestPageSessionsLive: a running session shows its card, whether its
// claude is warm, and the command that opens it in a terminal.
func TestPageSessionsLive(t *testing.T) {
	t.Parallel()
	snap := Snapshot{SessionCount: 1, Sessions: []Session{{Key: "main:tg:direct:5", Agent: "main", SessionID: "0b9d6c9e", Running: true, Queued: 2,
		Card: "⏳ Working · 40s · Bash: go test · 2 messages wait behind this one.", Warm: true,
		Command: "cd '/srv/my ws' && CLAUDE_CONFIG_DIR=/srv/data/claude claude --resume 0b9d6c9e"}}}
	s := start(t, Options{Source: &fakeSource{snap: snap}})
	_, body, _ := do(t, s, request{path: "/"})
	for _, want := range []string{
		`<span class="card">⏳ Working · 40s · Bash: go test · 2 messages wait behind this one.</span>`,
		`<h2 id="running">Running now</h2>`, `<td><code>main:tg:direct:5</code></td><td></td><td>main</td><td>⏳ Working · 40s · Bash: go test · 2 messages wait behind this one.</td><td class="n">2</td>`,
		`<span class="ok">warm</span>`,
		`<code class="cmd">cd &#39;/srv/my ws&#39; &amp;&amp; CLAUDE_CONFIG_DIR=/srv/data/claude claude --resume 0b9d6c9e</code>`,
		`<h2 id="sessions">`, `<section id="usage">`, `<section id="audit">`, `href="/sessions/export?session=main%3atg%3adirect%3a5"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

type fakeExporter struct{ path string }

func (f fakeExporter) ExportSession(_ context.Context, key string) (string, error) {
	if key != "main:tg:direct:5" {
		return "", fmt.Errorf("%w: %s", ErrNoExport, key)
	}
	return f.path, nil
}

// TestSessionExport: the export link downloads the session's Markdown;
// an unknown session is 404; the token is needed.
func TestSessionExport(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "session-20261120-100000.000.md")
	if err := os.WriteFile(path, []byte("# Session main:tg:direct:5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, Options{Source: &fakeSource{}, Exporter: fakeExporter{path}})
	code, body, hdr := do(t, s, request{path: "/sessions/export?session=" + url.QueryEscape("main:tg:direct:5")})
	if code != http.StatusOK || body != "# Session main:tg:direct:5\n" || !strings.Contains(hdr.Get("Content-Disposition"), `filename="session-20261120-100000.000.md"`) {
		t.Errorf("export: %d %q %q", code, body, hdr.Get("Content-Disposition"))
	}
	if code, _, _ := do(t, s, request{path: "/sessions/export?session=other"}); code != http.StatusNotFound {
		t.Errorf("an unknown session: %d, want 404", code)
	}
	if code, _, _ := do(t, s, request{path: "/sessions/export?session=main:tg:direct:5", header: map[string]string{"Authorization": ""}}); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
}

// TestNearBudgetsSkipsTheExempt: an owner past a person's budget is not
// near it (the budget never holds them); the same spend by anyone else is.
func TestNearBudgetsSkipsTheExempt(t *testing.T) {
	t.Parallel()
	today := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	rows := []UsageRecord{{At: today.Add(time.Hour), Sender: "tg:owner", CostUSD: 2}, {At: today.Add(2 * time.Hour), Sender: "tg:bob", CostUSD: 2}}
	b := Budget{Scope: "person", LimitUSD: 1, WarnAt: 0.8, Exempt: []string{"tg:owner"}}
	near := nearBudgets(rows, []Budget{b}, today, time.UTC)
	if len(near) != 1 || near[0].Key != "tg:bob" || !near[0].Over {
		t.Errorf("near %+v, want only tg:bob, over", near)
	}
}
