package admin

import "time"

// Plugin is one enabled plugin instance as seen by the supervisor.
type Plugin struct {
	// Instance is the configured instance name (the block label).
	Instance string `json:"instance"`
	// Source is the plugin source, e.g. "telegram".
	Source string `json:"source"`
	// State is the instance's state: starting, ready, needs_attention,
	// degraded, misconfigured, missing, no_sandbox, unresponsive, standby
	// or stopped.
	State string `json:"state"`
	// LastError is the last error the plugin failed with; empty if none.
	LastError string `json:"last_error,omitempty"`
	// Restarts counts restarts since the host started.
	Restarts int `json:"restarts"`
	// PID is the plugin process id; 0 when not running.
	PID int `json:"pid,omitempty"`
	// RSS is the plugin process's resident set in bytes; 0 when unknown.
	RSS int64 `json:"rss_bytes,omitempty"`
	// Private is the part of RSS only this process holds (heap, stacks:
	// not its binary's pages, which the page cache shares and the kernel
	// drops first); 0 when unknown.
	Private int64 `json:"private_bytes,omitempty"`
	// Since is when the plugin entered State; zero if unknown.
	Since time.Time `json:"since"`
	// Ready reports whether the plugin is up and serving; /healthz
	// requires every plugin to be ready.
	Ready bool `json:"ready"`
	// Action says what the operator does about State; empty when nothing.
	Action string `json:"action,omitempty"`
	// Kinds lists the plugin kinds the instance serves ("channel",
	// "command", "hook").
	Kinds []string `json:"kinds"`
	// Message is what the running plugin last reported about itself,
	// exactly as reported; empty when nothing.
	Message string `json:"message,omitempty"`
	// Attention is what the operator needs to act when State is
	// needs_attention, exactly as the plugin reported it; nil otherwise.
	Attention *Attention `json:"attention,omitempty"`
}

// Attention is what a plugin that needs attention asks the operator for.
type Attention struct {
	// Kind is "qr" (Data is text to encode as a QR code and scan), "code"
	// (a code to type on a device) or "link" (a URL to open).
	Kind string `json:"kind"`
	// Data is the QR payload, the code or the URL.
	Data string `json:"data"`
	// ExpiresAt is when Data stops being valid; zero when unknown.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Retry, when not empty, labels the action that POST
	// /plugins/{instance}/retry (and `clawhost retry`) performs.
	Retry string `json:"retry,omitempty"`
}

// DisabledPlugin is a plugin block that is not enabled.
type DisabledPlugin struct {
	Instance string `json:"instance"`
	Source   string `json:"source"`
	// Why is the enabled expression as written and where, e.g.
	// `enabled = env("TELEGRAM_BOT_TOKEN", "") != "" at config.hcl:12 is false`.
	Why string `json:"why"`
}
