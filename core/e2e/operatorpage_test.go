package e2e

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/clawhost/clawhost/core/admin"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/core/store/sqlite"
	"github.com/clawhost/clawhost/plugins/webchat/webchattest"
)

// seedOperatorLedger writes the ledger and the audit trail of two people
// on two agents through the store's API, before the host starts: alice
// spent 0.85 of her 1.00 a day today (near her budget).
func seedOperatorLedger(t *testing.T, data string) []store.TurnUsage {
	t.Helper()
	ctx := context.Background()
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(ctx, data, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := time.Now()
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 30, 0, 0, time.Local)
	rows := []store.TurnUsage{
		{At: today.AddDate(0, 0, -3), Agent: "main", Instance: "lo", ChatID: "chat-alice", Sender: "lo:alice", CostUSD: 0.2, Outcome: "ok"},
		{At: today.AddDate(0, 0, -1), Agent: "ops", Instance: "lo", ChatID: "chat-bob", Sender: "lo:bob", CostUSD: 0.3, Outcome: "ok"},
		{At: today, Agent: "main", Instance: "lo", ChatID: "chat-alice", Sender: "lo:alice", CostUSD: 0.85, Outcome: "ok"},
		{At: today.Add(time.Minute), Agent: "ops", Instance: "lo", ChatID: "chat-bob", Sender: "lo:bob", CostUSD: 0.05, Outcome: "ok"},
		// A sender id is the platform's: it reaches the page as text only.
		{At: today.AddDate(0, 0, -2), Agent: "ops", Instance: "lo", ChatID: "chat-x", Sender: `lo:<img src=x onerror="window.pwned=1">`, CostUSD: 0.01, Outcome: "ok"},
	}
	for i, u := range rows {
		r, err := db.Accept(ctx, store.Inbound{Instance: "lo", ChatID: u.ChatID, MessageID: fmt.Sprint("seed-", i), Message: []byte(`{"text":"seed"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Enqueue(ctx, r.ID, "main:lo:direct:"+u.ChatID); err != nil {
			t.Fatal(err)
		}
		if err := db.Start(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		u := u
		if err := db.RecordReply(ctx, store.Reply{JournalID: r.ID, Usage: &u, ProducedAt: u.At}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 40 {
		if err := db.Audit(ctx, store.AuditEvent{At: n.Add(-time.Duration(i+1) * time.Minute), Kind: store.AuditCommand, Actor: "lo:alice",
			Instance: "lo", ChatID: "chat-alice", Subject: "/status", Decision: "allowed"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Audit(ctx, store.AuditEvent{At: n.Add(-90 * time.Minute), Kind: store.AuditTool, Actor: "lo:bob", Instance: "lo", ChatID: "chat-bob",
		Subject: "Bash", Decision: "denied", Detail: "rm -rf needle83"}); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestOperatorsPage: in Chromium against the real binary with a seeded
// ledger and audit trail, the operator's page draws the usage (read back
// from the page's data and uPlot's legend), a filter narrows it, its CSV
// equals the ledger, the audit search finds the one row and pages, a
// pairing approved on the page lets the stranger talk, the page fits a
// phone's 390 px, and no request leaves loopback; a request without the
// token or from another origin is refused.
func TestOperatorsPage(t *testing.T) {
	var seeded []store.TurnUsage
	d, base := startPairingHost(t, func(h *Host) {
		h.Blocks = append(h.Blocks, Block{Type: "budget", Attrs: Attrs{"per_sender_daily_usd": 1.0}})
		seeded = seedOperatorLedger(t, filepath.Join(h.Dir, "data"))
	})
	dir := d.Dir()
	token, err := admin.ReadToken(filepath.Join(dir, "data", admin.TokenFile))
	if err != nil {
		t.Fatal(err)
	}
	refusedWithoutToken(t, base, token)

	b := webchattest.NewBrowser(t, wcBrowserTimeout)
	var mu sync.Mutex
	var requested []string
	if err := chromedp.Listen(b.Ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.Ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(base+"/?token="+token)); err != nil {
		t.Fatal(err)
	}
	waitUsage := func(query string) admin.Daily {
		t.Helper()
		if err := b.WaitJS(`document.getElementById("usage").getAttribute("data-rendered") === ` + strconv.Quote(query)); err != nil {
			t.Fatal(err)
		}
		raw, err := webchattest.Eval[string](b, `JSON.stringify(window.clawhostUsage)`)
		if err != nil {
			t.Fatal(err)
		}
		var u admin.Daily
		if err := json.Unmarshal([]byte(raw), &u); err != nil {
			t.Fatal(err)
		}
		return u
	}

	// The charts: two people, their sums as seeded, alice near her budget.
	u := waitUsage("by=person&days=30")
	sums := map[string]float64{}
	for _, s := range u.Series {
		for _, c := range s.CostUSD {
			sums[s.Key] += c
		}
	}
	if len(u.Series) != 3 || !near(sums["lo:alice"], 1.05) || !near(sums["lo:bob"], 0.35) {
		t.Errorf("the page's series %+v, want lo:alice 1.05, lo:bob 0.35 and the img", sums)
	}
	if pwned, _ := webchattest.Eval[bool](b, `window.pwned === 1 || !!document.querySelector("img[src=x]")`); pwned {
		t.Error("a sender id in the ledger became markup on the page")
	}
	legend, err := webchattest.Eval[[]string](b, `Array.from(document.querySelectorAll("#chart-cost .u-legend .u-series th")).map(e => e.textContent.trim()).filter(Boolean)`)
	if err != nil {
		t.Fatal(err)
	}
	if j := strings.Join(legend, "|"); !strings.Contains(j, "lo:alice") || !strings.Contains(j, "lo:bob") || !strings.Contains(j, "budget person $1.0000/day") {
		t.Errorf("uPlot's legend %q lacks the people or the budget line", legend)
	}
	if n, _ := webchattest.Eval[int](b, `document.querySelectorAll("#chart-cost canvas, #chart-turns canvas").length`); n != 2 {
		t.Errorf("%d chart canvases, want 2", n)
	}
	if near, _ := webchattest.Eval[string](b, `document.getElementById("usage-near").textContent`); !strings.Contains(near, "lo:alice — $0.8500 of $1.0000") {
		t.Errorf("near a budget: %q", near)
	}

	// The CSV is the ledger summed by day and person.
	checkCSV(t, b, seeded)

	// A filter narrows the charts to bob.
	if _, err := webchattest.Eval[bool](b, `(() => { const s = document.querySelector("#usage-filter select[name=person]"); s.value = "lo:bob"; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`); err != nil {
		t.Fatal(err)
	}
	if u := waitUsage("by=person&days=30&person=lo%3Abob"); len(u.Series) != 1 || u.Series[0].Key != "lo:bob" {
		t.Errorf("filtered to bob: %+v", u.Series)
	}

	checkAuditSearch(t, b)
	screenshots(t, b, base, 1280)

	// A stranger asks; the live part shows the request by itself (it
	// refreshes in place: the page is not reloaded), and its Approve lets
	// the stranger in.
	if _, err := webchattest.Eval[bool](b, `(window.sameDocument = true)`); err != nil {
		t.Fatal(err)
	}
	d.post("stranger", "hello")
	code := pairingCode(t, d.nextSend("chat-stranger"))
	sel := `form[action="/pairing/approve"]:has(input[value="` + code + `"]) button`
	if err := b.WaitJS(`document.querySelector('` + sel + `')`); err != nil {
		t.Fatalf("no Approve button for %s: %v", code, err)
	}
	if same, _ := webchattest.Eval[bool](b, `window.sameDocument === true`); !same {
		t.Error("the page was reloaded to show the pairing request, not refreshed in place")
	}
	if _, err := webchattest.Eval[bool](b, `(document.querySelector('`+sel+`').click(), true)`); err != nil {
		t.Fatal(err)
	}
	if got := d.nextSend("chat-stranger"); !strings.Contains(got, "An owner approved you") {
		t.Fatalf("after the page's approval: %q", got)
	}
	if got := d.nextSend("chat-stranger"); !strings.Contains(got, "hello") {
		t.Fatalf("the held message after approval: %q", got)
	}
	d.post("stranger", "now me")
	if got := d.nextSend("chat-stranger"); !strings.Contains(got, "now me") {
		t.Fatalf("the stranger after approval: %q", got)
	}

	checkSessionRow(t, b, base)

	// A phone's width: nothing scrolls sideways but the tables' own boxes.
	screenshots(t, b, base, 390)
	if w, err := webchattest.Eval[int](b, `document.documentElement.scrollWidth`); err != nil || w > 390 {
		t.Errorf("at 390 px the page is %d px wide (%v)", w, err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, r := range requested {
		if pu, err := url.Parse(r); err != nil || (pu.Scheme != "data" && "http://"+pu.Host != base) {
			t.Errorf("the page requested %s, beyond the admin endpoint", r)
		}
	}
	if len(requested) < 5 {
		t.Errorf("only %d requests seen: %v", len(requested), requested)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// checkCSV fetches the page's CSV link from the page and compares it with
// the seeded ledger summed by day and person.
func checkCSV(t *testing.T, b *webchattest.Browser, seeded []store.TurnUsage) {
	t.Helper()
	if _, err := webchattest.Eval[bool](b, `(fetch(document.getElementById("usage-csv").href).then(r => r.text()).then(s => window.csvText = s), true)`); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`typeof window.csvText === "string"`); err != nil {
		t.Fatal(err)
	}
	text, _ := webchattest.Eval[string](b, `window.csvText`)
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("CSV %q: %v", text, err)
	}
	type dk struct{ day, who string }
	want := map[dk]float64{}
	for _, u := range seeded {
		want[dk{u.At.Format(time.DateOnly), u.Sender}] += u.CostUSD
	}
	got := map[dk]float64{}
	for _, r := range recs[1:] {
		c, _ := strconv.ParseFloat(r[3], 64)
		got[dk{r[0], r[1]}] = c
	}
	if len(got) != len(want) {
		t.Errorf("CSV has %d lines, the ledger %d groups:\n%s", len(got), len(want), text)
	}
	for k, v := range want {
		if !near(got[k], v) {
			t.Errorf("CSV %v = %v, the ledger %v", k, got[k], v)
		}
	}
}

// checkAuditSearch: the search finds the one seeded tool row; the 41 rows
// page by 25.
func checkAuditSearch(t *testing.T, b *webchattest.Browser) {
	t.Helper()
	search := func(q string) {
		t.Helper()
		if _, err := webchattest.Eval[bool](b, `(() => { window.clawhostAudit = null; const f = document.getElementById("audit-filter"); f.elements.q.value = `+strconv.Quote(q)+`; f.requestSubmit(); return true })()`); err != nil {
			t.Fatal(err)
		}
		if err := b.WaitJS(`window.clawhostAudit`); err != nil {
			t.Fatal(err)
		}
	}
	search("needle83")
	rows, _ := webchattest.Eval[[]string](b, `Array.from(document.querySelectorAll("#audit-rows tr")).map(r => r.textContent)`)
	if len(rows) != 1 || !strings.Contains(rows[0], "rm -rf needle83") || !strings.Contains(rows[0], "lo:bob") {
		t.Errorf("the search for needle83 shows %q", rows)
	}
	search("")
	if pages, _ := webchattest.Eval[string](b, `document.getElementById("audit-pages").textContent`); !strings.HasPrefix(pages, "41 rows · page 1 of 2") {
		t.Errorf("paging: %q", pages)
	}
	if _, err := webchattest.Eval[bool](b, `(document.getElementById("audit-next").click(), true)`); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.getElementById("audit").getAttribute("data-page") === "2" && document.querySelectorAll("#audit-rows tr").length === 16`); err != nil {
		t.Error(err)
	}
	last, _ := webchattest.Eval[string](b, `document.querySelector("#audit-rows tr:last-child").textContent`)
	if !strings.Contains(last, "needle83") {
		t.Errorf("the oldest row, last on page 2: %q", last)
	}
}

// screenshots sets the viewport's width, reloads the page and keeps a
// screenshot of it in the artefacts directory (CLAWHOST_ARTEFACTS, else
// under the system's temporary directory).
func screenshots(t *testing.T, b *webchattest.Browser, base string, width int64) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`document.getElementById("usage").hasAttribute("data-rendered") && document.querySelector("#chart-cost canvas")`); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("CLAWHOST_ARTEFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "clawhost-artefacts")
	}
	dir = filepath.Join(dir, t.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("operators-page-%dpx.png", width))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// refusedWithoutToken: the page's data needs the token, and a POST from
// another origin is refused even with it.
func refusedWithoutToken(t *testing.T, base, token string) {
	t.Helper()
	for _, p := range []string{"/usage/daily.json", "/usage/daily.csv", "/audit/search.json", "/"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", p, resp.StatusCode)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/pairing/approve", strings.NewReader("code=ABCDEF&from=page"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a POST from another origin: %d, want 403", resp.StatusCode)
	}
}

// checkSessionRow: the stranger's session shows the command that opens it
// in a terminal, and its export link downloads the conversation.
func checkSessionRow(t *testing.T, b *webchattest.Browser, base string) {
	t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	row := `Array.from(document.querySelectorAll("#live tr")).find(r => r.textContent.includes("lo:direct:stranger"))`
	if err := b.WaitJS(row + `?.querySelector("code.cmd")`); err != nil {
		t.Fatalf("no terminal command on the stranger's session: %v", err)
	}
	cmd, _ := webchattest.Eval[string](b, row+`.querySelector("code.cmd").textContent`)
	if !strings.HasPrefix(cmd, "cd ") || !strings.Contains(cmd, " && CLAUDE_CONFIG_DIR=") || !strings.Contains(cmd, "claude --resume ") {
		t.Errorf("the terminal command %q", cmd)
	}
	if _, err := webchattest.Eval[bool](b, `(fetch(`+row+`.querySelector('a[href^="/sessions/export"]').href).then(r => r.text()).then(s => window.exportText = s), true)`); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitJS(`typeof window.exportText === "string"`); err != nil {
		t.Fatal(err)
	}
	if text, _ := webchattest.Eval[string](b, `window.exportText`); !strings.Contains(text, "now me") {
		t.Errorf("the export of the stranger's session:\n%s", text)
	}
}
