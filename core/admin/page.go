package admin

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/internal/qrcode"
)

// page serves GET /: the status page. It is rendered into a buffer first so
// a template error yields a clean 500 instead of half a page.
func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	snap, ok := h.snapshot(r.Context())
	data := pageData{Snap: snap, OK: ok, Now: h.now()}
	for _, p := range snap.Plugins {
		// A channel in standby is served by another host: as good as ready.
		if p.Ready || p.State == "standby" {
			data.Ready++
		}
	}
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, data); err != nil {
		h.log.Error("render status page", "error", err)
		http.Error(w, "rendering the status page failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write(buf.Bytes())
}

// pageData is the status page's template data.
type pageData struct {
	Snap  Snapshot
	OK    bool // the source answered
	Now   time.Time
	Ready int // plugins ready
}

// Age formats the time elapsed from t to the page's clock, "—" for the
// zero time.
func (d pageData) Age(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return formatDuration(d.Now.Sub(t))
}

// Stamp formats t for the page, "—" for the zero time.
func (d pageData) Stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// Until says how long until t by the page's clock: "45s left" or
// "expired 3s ago".
func (d pageData) Until(t time.Time) string {
	if left := t.Sub(d.Now); left > 0 {
		return formatDuration(left) + " left"
	}
	return "expired " + formatDuration(d.Now.Sub(t)) + " ago"
}

// LeaseState says how a lease stands by the page's clock: "expires in
// 13s" or "expired 20s ago".
func (d pageData) LeaseState(live bool, expires time.Time) string {
	return LeaseState(live, expires, d.Now)
}

// qrScale is the size of one QR module on the page, in pixels.
const qrScale = 5

// qrSource returns a QR code of text as a data: URI for an <img>, or ""
// when text cannot be encoded. The image is built on every page load, so
// the page's refresh shows a rotated code.
func qrSource(text string) template.URL {
	png, err := qrcode.PNG(text, qrScale)
	if err != nil {
		return ""
	}
	// A data: URI of our own PNG: safe to mark as a URL for the template.
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png))
}

// formatDuration formats d coarsely: 42s, 3m07s, 5h03m, 2d05h.
func formatDuration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	default:
		return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
	}
}

// pageTemplate is parsed at the first request, not at every start of the
// host (a millisecond of its start-up when it was a package variable).
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("status").Funcs(template.FuncMap{
		"join":        func(s []string) string { return strings.Join(s, ", ") },
		"qrsrc":       qrSource,
		"running":     running,
		"cost":        func(f float64) string { return fmt.Sprintf("$%.4f", f) },
		"mb":          MB,
		"spareAction": func() string { return SpareAction },
		"short": func(s string) string {
			if r := []rune(s); len(r) > 8 {
				return string(r[:8])
			}
			return s
		},
	}).Parse(scrollTables(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<noscript><meta http-equiv="refresh" content="5"></noscript>
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>clawhost</title>
<link rel="stylesheet" href="/assets/uPlot.min.css">
<link rel="stylesheet" href="/assets/ops.css">
<script src="/assets/uPlot.iife.min.js" defer></script>
<script src="/assets/ops.js" defer></script>
</head>
<body>
<h1>clawhost</h1>
<nav><a href="#live">Live</a><a href="#running">Running</a><a href="#usage">Usage</a><a href="#pairing">Waiting</a><a href="#sessions">Sessions</a><a href="#audit">Audit trail</a><a href="#errors">Errors</a></nav>
` + usageSection + `<div id="live">
{{if not .OK}}<p class="bad">The status source did not answer in time.</p>
{{end}}{{with .Snap.LastReload}}{{if .Refused}}<div class="bad"><p><b>The last reload ({{$.Stamp .At}}) was refused; the running set is kept.</b> Fix the file, check it with <code>clawhost validate</code>, then reload again (SIGHUP).</p>
<pre class="err">{{.Reason}}</pre></div>
{{else if .NeedsRestart}}<div class="bad"><p><b>The last reload ({{$.Stamp .At}}) was applied, but these changes wait for a restart of clawhost:</b> {{join .NeedsRestart}}.</p></div>
{{end}}{{end}}` + healthSections + `{{with .Snap.Paused}}<div class="bad"><p><b>Turns are paused until {{$.Stamp .Until}}: claude's {{if eq .Reason "usage_limit"}}usage limit{{else}}rate limit ({{.Reason}}){{end}} was reached.</b> Messages are kept (parked in the journal) and run once each, in order, when it ends; an owner's <code>/resume</code> in a chat retries now.</p></div>
{{end}}<p class="meta">version {{or .Snap.Version "unknown"}}{{if .Snap.Sandbox}} · sandbox: {{.Snap.Sandbox}}{{end}} · started {{.Stamp .Snap.StartedAt}} · up {{.Age .Snap.StartedAt}} · page refreshes every 5 s</p>
<ul class="summary">
<li>plugins ready: <b class="{{if eq .Ready (len .Snap.Plugins)}}ok{{else}}bad{{end}}">{{.Ready}}/{{len .Snap.Plugins}}</b></li>
<li>sessions: <b>{{.Snap.SessionCount}}</b></li>
<li>queued messages: <b>{{.Snap.QueueDepth}}</b></li>
<li>warm processes: <b>{{len .Snap.Warm}}</b></li>
<li>host memory: <b>{{mb .Snap.Host.RSS}}</b> resident, {{mb .Snap.Host.Private}} of it private, Go heap {{mb .Snap.Host.Heap}} (pid {{.Snap.Host.PID}})</li>
{{with .Snap.Host.ProcsText}}<li>host processors: <b>{{.}}</b></li>
{{end}}{{with .Snap.Cluster}}{{if not .Error}}<li>hosts live: <b class="{{if eq .LiveHosts (len .Hosts)}}ok{{else}}bad{{end}}">{{.LiveHosts}}/{{len .Hosts}}</b></li>
{{end}}{{end}}</ul>

{{with .Snap.Cluster}}<h2>Hosts</h2>
<p class="meta">this host: <b>{{.HostID}}</b> · the hosts share one {{.Engine}} database; a host whose lease expired is dead to the others, which take its work over</p>
{{if .Error}}<p class="bad">The leases could not be read: <span class="err">{{.Error}}</span></p>
{{else}}<table>
<thead><tr><th>host</th><th>state</th><th>sessions</th><th>up since</th><th>renewed</th><th>epoch</th><th>pid</th><th>admin</th><th>version</th></tr></thead>
<tbody>
{{range .Hosts}}<tr{{if .This}} class="this"{{end}}><td>{{.ID}}{{if .This}} <b>(this host)</b>{{end}}</td><td class="{{if .Live}}ok{{else}}bad{{end}}">{{if .Live}}live, {{$.LeaseState .Live .Expires}}{{else}}{{$.LeaseState .Live .Expires}} — its work is taken over by the other hosts{{end}}</td><td class="n">{{.Sessions}}</td><td>{{$.Stamp .Since}} ({{$.Age .Since}})</td><td class="n">{{$.Age .Renewed}} ago</td><td class="n">{{.Epoch}}</td><td class="n">{{if .PID}}{{.PID}}{{else}}—{{end}}</td><td>{{if .Admin}}<code>{{.Admin}}</code>{{else}}—{{end}}</td><td>{{.Version}}</td></tr>
{{end}}</tbody>
</table>
<h2>Leases</h2>
{{if .Leases}}<table>
<thead><tr><th>holder</th><th>lease</th><th>state</th><th>renewed</th><th>held since</th><th>epoch</th></tr></thead>
<tbody>
{{range .Leases}}<tr><td>{{.Holder}}{{if eq .Holder $.Snap.Cluster.HostID}} <b>(this host)</b>{{end}}</td><td><code>{{.Name}}</code></td><td class="{{if .Live}}ok{{else}}bad{{end}}">{{if .Live}}live, {{end}}{{$.LeaseState .Live .Expires}}</td><td class="n">{{$.Age .Renewed}} ago</td><td>{{$.Stamp .Acquired}}</td><td class="n">{{.Epoch}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<p class="none">No lease besides the hosts'.</p>
{{end}}{{end}}{{end}}
` + runningSection + `<h2>Plugins</h2>
{{if .Snap.Plugins}}<table>
<thead><tr><th>instance</th><th>source</th><th>kinds</th><th>state</th><th>ready</th><th>in state for</th><th>restarts</th><th>pid</th><th>memory</th><th>last error</th></tr></thead>
<tbody>
{{range .Snap.Plugins}}{{$p := .}}<tr><td>{{.Instance}}</td><td>{{.Source}}</td><td>{{join .Kinds}}</td><td>{{.State}}</td><td class="{{if .Ready}}ok{{else if eq .State "standby"}}none{{else}}bad{{end}}">{{if .Ready}}yes{{else if eq .State "standby"}}on another host{{else}}no{{end}}</td><td class="n">{{$.Age .Since}}</td><td class="n">{{.Restarts}}</td><td class="n">{{if .PID}}{{.PID}}{{else}}—{{end}}</td><td class="n">{{mb .RSS}}{{if .Private}} ({{mb .Private}} private){{end}}</td><td class="err">{{.LastError}}{{if .Action}}{{if .LastError}}<br>{{end}}<b>What to do:</b> {{.Action}}{{end}}{{if .PID}}<form method="post" action="/plugins/{{.Instance}}/restart"><input type="hidden" name="from" value="page"><button type="submit">Restart</button></form>{{end}}</td></tr>
{{with .Attention}}<tr class="attention" id="attention-{{$p.Instance}}"><td colspan="9">
{{if eq .Kind "qr"}}{{with qrsrc .Data}}<p>Scan this QR code for <b>{{$p.Instance}}</b>:</p>
<img class="qr" src="{{.}}" alt="QR code for {{$p.Instance}}">
{{else}}<p class="bad">The QR code for {{$p.Instance}} cannot be shown (the plugin sent {{len $p.Attention.Data}} bytes).</p>
{{end}}{{else if eq .Kind "code"}}<p>Code for <b>{{$p.Instance}}</b>: <code class="code">{{.Data}}</code></p>
{{else if eq .Kind "link"}}<p>Open: <a href="{{.Data}}" rel="noreferrer noopener" target="_blank">{{.Data}}</a></p>
{{else}}<p>{{.Kind}}: <code>{{.Data}}</code></p>
{{end}}{{if not .ExpiresAt.IsZero}}<p class="meta">valid until {{$.Stamp .ExpiresAt}} ({{$.Until .ExpiresAt}}); this page refreshes every 5 s and shows the plugin's newest one</p>
{{end}}{{if .Retry}}<form method="post" action="/plugins/{{$p.Instance}}/retry"><button type="submit">{{.Retry}}</button></form>
{{end}}</td></tr>
{{end}}{{end}}</tbody>
</table>
{{else}}<p class="none">No plugin enabled.</p>
{{end}}
{{if .Snap.Disabled}}<p>Not enabled (not started):</p>
<ul>{{range .Snap.Disabled}}<li id="disabled-{{.Instance}}"><b>{{.Instance}}</b> ({{.Source}}): {{.Why}}</li>
{{end}}</ul>
{{end}}{{with .Snap.Doctor}}<h2 id="doctor">Checks (clawhost doctor)</h2>
{{if .Running}}<p class="meta">The checks are running; this page shows them when they are done.</p>
{{end}}{{if .At.IsZero}}{{if not .Running}}<p class="none">Not run yet: the checks ask claude, each channel's platform and the disk (a few seconds).</p>
{{end}}{{else}}<p class="meta">Run {{$.Age .At}} ago: {{if .Failed}}<b class="bad">{{.Failed}} fail</b>{{else}}<b class="ok">nothing fails</b>{{end}}</p>
<table><thead><tr><th>verdict</th><th>check</th><th>found</th><th>what to do</th></tr></thead><tbody>
{{range .Checks}}<tr><td class="{{if eq .Verdict "ok"}}ok{{else if eq .Verdict "fail"}}bad{{else}}none{{end}}">{{.Verdict}}</td><td>{{.Name}}</td><td>{{.Found}}</td><td>{{.Do}}</td></tr>
{{end}}</tbody></table>
{{end}}<form method="post" action="/doctor"><input type="hidden" name="from" value="page"><button type="submit">Run checks</button></form>
{{end}}{{if or .Snap.Approvals .Snap.Decisions}}<h2>Tool approvals</h2>
{{if .Snap.Approvals}}<p class="meta">These turns wait until someone in the chat answers (or agent.approval_timeout denies).</p>
<table>
<thead><tr><th>session</th><th>tool</th><th>input</th><th>who may answer</th><th>waiting</th><th></th></tr></thead>
<tbody>
{{range .Snap.Approvals}}<tr><td><code>{{.Session}}</code></td><td>{{.Tool}}</td><td><code>{{.Summary}}</code></td><td>{{if .Asker}}{{.Asker}} or an owner{{else}}an owner{{end}}</td><td class="n">{{$.Age .Since}}</td><td>{{if .ID}}<form method="post" action="/approvals/{{.ID}}/allow"><input type="hidden" name="from" value="page"><button type="submit">Allow</button></form><form method="post" action="/approvals/{{.ID}}/deny"><input type="hidden" name="from" value="page"><button type="submit">Deny</button></form>{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Snap.Decisions}}<table>
<thead><tr><th>session</th><th>tool</th><th>input</th><th>decision</th><th>by</th><th>when</th></tr></thead>
<tbody>
{{range .Snap.Decisions}}<tr><td><code>{{.Session}}</code></td><td>{{.Tool}}</td><td><code>{{.Summary}}</code></td><td>{{.Outcome}}</td><td>{{.By}}</td><td class="n">{{$.Age .At}} ago</td></tr>
{{end}}</tbody>
</table>
{{end}}{{end}}
` + pairingSection + teamSections + `{{if .Snap.Attached}}<h2>Attached terminals</h2>
<p class="meta">These chats talk to a terminal claude (<code>clawhost channel</code>); <code>/detach</code> in the chat, or the terminal's exit, gives them back to their own claude.</p>
<table>
<thead><tr><th>chat</th><th>session</th><th>terminal session</th><th>since</th><th>answered</th><th>state</th></tr></thead>
<tbody>
{{range .Snap.Attached}}<tr><td><code>{{.Chat}}</code></td><td><code>{{.Session}}</code></td><td><code>{{.TerminalSession}}</code></td><td class="n">{{$.Age .Since}} ago</td><td class="n">{{.Answered}}</td><td>{{if .Waiting}}waiting for the terminal to reconnect{{else}}attached{{end}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Snap.UnlistedGroups}}<h2>Groups not allowed</h2>
<p class="meta">These group chats wrote, but <code>access.groups</code> does not list them, so they get no answer. To answer in one, add its id to <code>access { groups = [...] }</code> and reload (SIGHUP).</p>
<table>
<thead><tr><th>add to access.groups</th><th>title</th><th>messages</th><th>last</th></tr></thead>
<tbody>
{{range .Snap.UnlistedGroups}}<tr><td><code>"{{.ID}}"</code></td><td>{{.Title}}</td><td class="n">{{.Messages}}</td><td class="n">{{$.Age .LastSeen}} ago</td></tr>
{{end}}</tbody>
</table>
{{end}}
{{if gt (len .Snap.Agents) 1}}<h2>Agents</h2>
<table>
<thead><tr><th>agent</th><th>workspace</th><th>bound to</th><th>switchable</th><th>warm</th></tr></thead>
<tbody>
{{range .Snap.Agents}}<tr><td>{{.ID}}</td><td><code>{{.Workspace}}</code></td><td>{{if .Chats}}{{range $i, $c := .Chats}}{{if $i}}, {{end}}<code>{{$c}}</code>{{end}}{{else}}every chat no agent binds{{end}}</td><td>{{if .Switchable}}yes{{else}}no{{end}}</td><td class="n">{{.Warm}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
<h2 id="sessions">Sessions</h2>
{{if .Snap.Sessions}}<p class="meta">showing {{len .Snap.Sessions}} of {{.Snap.SessionCount}}, most recently active first</p>
<table>
<thead><tr><th>agent</th><th>with</th><th>key</th><th>session</th><th>model</th><th>last activity</th><th>turns</th><th>input tokens</th><th>output tokens</th><th>cost</th><th>queued</th><th>running</th><th>warm</th><th>last turn</th><th>open in a terminal</th></tr></thead>
<tbody>
{{range .Snap.Sessions}}{{$s := .}}<tr><td>{{.Agent}}</td><td>{{.Name}}</td><td>{{.Key}}</td><td title="{{.SessionID}}">{{short .SessionID}}</td><td>{{.Model}}</td><td class="n">{{$.Age .LastActivity}} ago</td><td class="n">{{.Turns}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td><td class="n">{{cost .CostUSD}}</td><td class="n">{{.Queued}}</td><td>{{if .Running}}<span class="ok">running</span>{{with .Card}}<br><span class="card">{{.}}</span>{{end}}{{else}}idle{{end}}{{if or .Running .Queued}}<form method="post" action="/sessions/stop"><input type="hidden" name="session" value="{{.Key}}"><input type="hidden" name="from" value="page"><button type="submit">Stop</button></form>{{end}}</td><td>{{if .Warm}}<span class="ok">warm</span>{{else}}—{{end}}</td><td>{{.LastTurn}}</td><td>{{with .Command}}<code class="cmd">{{.}}</code> <a href="/sessions/export?session={{$s.Key}}" download>export</a>{{end}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<p class="none">No sessions.</p>
{{end}}
<h2>Warm claude processes</h2>
{{with .Snap.WarmPool}}<p class="meta">{{.Warm}} warm{{if .Spares}} ({{.Spares}} spare){{end}} holding <b>{{mb .Memory}}</b>{{if lt .Measured .Warm}} ({{.Measured}} measured){{end}}{{if .SparesAdopted}} · {{.SparesAdopted}} new sessions adopted a spare{{end}} · limit {{.Limits}} · time to first answer of a returning chat: warm <b>{{.FirstAnswerWarm}}</b>, cold <b>{{.FirstAnswerCold}}</b></p>{{if .SpareError}}<p class="bad">spare claude: {{.SpareError}} — {{spareAction}}</p>{{end}}
{{end}}{{if .Snap.Warm}}<table>
<thead><tr><th>agent</th><th>session key</th><th>pid</th><th>memory</th></tr></thead>
<tbody>
{{range .Snap.Warm}}<tr><td>{{.Agent}}</td><td>{{.Key}}</td><td class="n">{{.PID}}</td><td class="n">{{mb .RSS}}{{if .Private}} ({{mb .Private}} private){{end}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<p class="none">No warm process.</p>
{{end}}
<h2 id="errors">Recent errors</h2>
{{if .Snap.Errors}}<table>
<thead><tr><th>time</th><th>level</th><th>source</th><th>message</th></tr></thead>
<tbody>
{{range .Snap.Errors}}<tr><td>{{$.Stamp .At}}</td><td class="{{if eq .Level "error"}}bad{{end}}">{{.Level}}</td><td>{{.Source}}</td><td class="err">{{.Message}}</td></tr>
{{end}}</tbody>
</table>
{{else}}<p class="none">No recent errors.</p>
{{end}}</div>
` + auditSection + `</body>
</html>
`)))
})

// scrollTables wraps every table of the page in a box that scrolls
// sideways by itself, so a phone's screen holds the page and a wide table
// scrolls alone.
func scrollTables(src string) string {
	src = strings.ReplaceAll(src, "<table>", `<div class="scroll"><table>`)
	return strings.ReplaceAll(src, "</table>", "</table></div>")
}

// MB formats a byte count as the status page and `clawhost status` show
// memory: "12.3 MB" (MiB), "—" when unknown (0).
func MB(n int64) string {
	if n <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}
