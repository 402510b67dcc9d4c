package admin

// usageSection is the operator's page's usage over time: the filter, the
// charts (drawn by assets/ops.js with uPlot from /usage/daily.json), who
// is near a budget, the sums and the CSV of the numbers drawn.
const usageSection = `<section id="usage">
<h2>Usage over time</h2>
<form id="usage-filter" class="filter">
<label>by <select name="by"><option value="person">person</option><option value="chat">chat</option><option value="agent">agent</option></select></label>
<label>period <select name="days"><option value="7">7 days</option><option value="30" selected>30 days</option><option value="90">90 days</option></select></label>
<label>person <select name="person"><option value="">everyone</option></select></label>
<label>chat <select name="chat"><option value="">every chat</option></select></label>
<label>agent <select name="agent"><option value="">every agent</option></select></label>
<a id="usage-csv" href="/usage/daily.csv" download>CSV of these numbers</a>
</form>
<p id="usage-error" class="bad"></p>
<div id="chart-cost" class="chart"></div>
<div id="chart-turns" class="chart"></div>
<h3>Near a budget</h3>
<ul id="usage-near"></ul>
<div class="scroll"><table><thead><tr><th>who</th><th>turns</th><th>cost</th></tr></thead><tbody id="usage-table"></tbody></table></div>
<noscript><p class="meta">The charts need JavaScript; <a href="/usage/daily.csv">the CSV</a> has their numbers.</p></noscript>
</section>
`

// auditSection is the operator's page's search of the audit trail
// (/audit/search.json), newest first, paged.
const auditSection = `<section id="audit">
<h2>Audit trail</h2>
<form id="audit-filter" class="filter">
<label>search <input name="q" type="search" placeholder="words"></label>
<label>who <input name="who" placeholder="tg:42"></label>
<label>chat <input name="chat" placeholder="tg:-100"></label>
<label>kind <select name="kind"><option value="">every kind</option></select></label>
<label>from <input name="since" type="date"></label>
<label>to <input name="until" type="date"></label>
<button type="submit">Search</button>
</form>
<div class="scroll"><table><thead><tr><th>when</th><th>kind</th><th>by</th><th>chat</th><th>about</th><th>decision</th><th>detail</th></tr></thead><tbody id="audit-rows"></tbody></table></div>
<p><button id="audit-prev" type="button">newer</button> <span id="audit-pages" class="meta"></span> <button id="audit-next" type="button">older</button></p>
</section>
`

// runningSection is the live part's turns running now and the queues:
// each session with a turn running or messages waiting, what its turn's
// card says, and its Stop.
const runningSection = `<h2 id="running">Running now</h2>
{{if or .Snap.QueueDepth (running .Snap.Sessions)}}<table>
<thead><tr><th>session</th><th>with</th><th>agent</th><th>turn</th><th>queued</th><th></th></tr></thead>
<tbody>
{{range .Snap.Sessions}}{{if or .Running .Queued}}<tr><td><code>{{.Key}}</code></td><td>{{.Name}}</td><td>{{.Agent}}</td><td>{{if .Running}}{{or .Card "running"}}{{else}}waiting{{end}}</td><td class="n">{{.Queued}}</td><td><form method="post" action="/sessions/stop"><input type="hidden" name="session" value="{{.Key}}"><input type="hidden" name="from" value="page"><button type="submit">Stop</button></form></td></tr>
{{end}}{{end}}</tbody>
</table>
{{else}}<p class="none">No turn runs and no message waits.</p>
{{end}}`

// running reports whether a session of the list runs a turn.
func running(sessions []Session) bool {
	for _, s := range sessions {
		if s.Running {
			return true
		}
	}
	return false
}
