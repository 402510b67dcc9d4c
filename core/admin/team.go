package admin

import "time"

// Usage is the usage ledger as the status page shows it: what turns cost
// per day (the last 7) and, over the last 30 days, per person and per
// agent.
type Usage struct {
	Days   []UsageRow `json:"days"`
	People []UsageRow `json:"people"`
	Agents []UsageRow `json:"agents"`
}

// UsageRow is one group's sum: a day ("2026-11-25"), a person ("tg:5",
// "schedule:daily", "heartbeat") or an agent.
type UsageRow struct {
	Key          string  `json:"key"`
	Turns        int     `json:"turns"`
	CostUSD      float64 `json:"cost_usd"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
}

// AuditEntry is one row of the audit trail (store.AuditEvent).
type AuditEntry struct {
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	Actor    string    `json:"actor"`
	Chat     string    `json:"chat,omitempty"`
	Subject  string    `json:"subject"`
	Decision string    `json:"decision"`
	Detail   string    `json:"detail,omitempty"`
}

// teamSections are the status page's usage and audit sections.
const teamSections = `{{with .Snap.Usage}}<h2>Usage</h2>
<p class="meta">What turns cost as claude reports it (the usage ledger; <code>clawhost usage</code> and <code>/usage</code> read it too).</p>
<table>
<thead><tr><th>day</th><th>turns</th><th>cost</th><th>input</th><th>output</th></tr></thead>
<tbody>
{{range .Days}}<tr><td>{{.Key}}</td><td class="n">{{.Turns}}</td><td class="n">{{cost .CostUSD}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td></tr>
{{end}}</tbody>
</table>
{{if .People}}<table>
<thead><tr><th>person (30 days)</th><th>turns</th><th>cost</th><th>input</th><th>output</th></tr></thead>
<tbody>
{{range .People}}<tr><td><code>{{.Key}}</code></td><td class="n">{{.Turns}}</td><td class="n">{{cost .CostUSD}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{if .Agents}}<table>
<thead><tr><th>agent (30 days)</th><th>turns</th><th>cost</th><th>input</th><th>output</th></tr></thead>
<tbody>
{{range .Agents}}<tr><td>{{.Key}}</td><td class="n">{{.Turns}}</td><td class="n">{{cost .CostUSD}}</td><td class="n">{{.InputTokens}}</td><td class="n">{{.OutputTokens}}</td></tr>
{{end}}</tbody>
</table>
{{end}}{{end}}
{{if .Snap.Audit}}<h2>Audit trail</h2>
<p class="meta">The latest decisions about who may do what (<code>clawhost audit</code> lists them all; kept for <code>audit { keep }</code>).</p>
<table>
<thead><tr><th>when</th><th>kind</th><th>by</th><th>chat</th><th>about</th><th>decision</th><th>detail</th></tr></thead>
<tbody>
{{range .Snap.Audit}}<tr><td class="n">{{$.Age .At}} ago</td><td>{{.Kind}}</td><td><code>{{.Actor}}</code></td><td><code>{{.Chat}}</code></td><td><code>{{.Subject}}</code></td><td>{{.Decision}}</td><td>{{.Detail}}</td></tr>
{{end}}</tbody>
</table>
{{end}}
`
