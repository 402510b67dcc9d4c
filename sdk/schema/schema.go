// Package schema describes a plugin's config {} block and carries the decoded
// configuration to the plugin.
//
// A plugin declares its attributes as a Schema; the host decodes the user's
// HCL against it (so a typo points at file:line:col with "did you mean") and
// hands the result to the plugin as JSON in a Config.
package schema

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/clawhost/clawhost/sdk/status"
)

// Attribute is one attribute of a config {} block.
type Attribute struct {
	// Name is the attribute name as written in HCL.
	Name string
	// Type is an HCL type expression: "string", "number", "bool",
	// "list(string)", "map(string)", "object({...})". Empty means "string".
	Type string
	// Required makes the host refuse a config block without this attribute.
	Required bool
	// Default is used when the attribute is absent. It must be JSON
	// encodable and match Type. Nil means null.
	Default any
	// Sensitive values (tokens, passwords) are never logged by the host.
	Sensitive bool
	// Description is shown by the host in diagnostics and documentation.
	Description string
	// Listen marks the attribute that holds the address (host:port, a
	// string) the plugin serves people on — a web page, a local socket
	// people connect to — with its Default the address used when the block
	// does not set it. The host reads it from the file without starting the
	// plugin's instance: it audits it (clawhost security audit: beyond
	// loopback, without TLS) and counts the channel as reachable from this
	// machine only while it is a loopback address (the sandbox rule: then
	// only who can log in here reaches the agent through it). At most one
	// attribute is marked.
	Listen bool
	// ListenToken, with Listen: whoever opens the address is asked for a
	// token the operator hands out (the web chat's access_token), so a
	// wildcard allow_from on a loopback address admits only who holds it.
	ListenToken bool
}

// Schema is the list of attributes of a plugin's config {} block.
type Schema []Attribute

// Config is what a plugin receives in Configure.
type Config struct {
	// Instance is the plugin instance name: the label of plugin "<instance>".
	Instance string
	// DataDir is a private, persistent directory for this instance (0700).
	DataDir string
	// JSON is the decoded config {} block, a JSON object with one key per
	// schema attribute (absent optional attributes are their default or null).
	JSON []byte
	// Logger is the plugin's logger; its lines appear in the host log under
	// the instance name, with their level and attributes. Debug and trace
	// lines (a level below slog.LevelDebug is trace) are written only when
	// the host's log level asks for them. Never log secrets. Nil when a
	// test configures the plugin directly; sdk.Serve and sdktest always set
	// it.
	Logger *slog.Logger
	// Status reports the plugin's state to the operator (see package
	// status). Keep it: it stays valid for the life of the process. In
	// Validate it is status.Discard.
	Status status.Reporter
}

// Log is Logger, or a logger that discards every line when Logger is nil
// (a test that configures the plugin directly).
func (c Config) Log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Reporter is Status, or status.Discard when Status is nil.
func (c Config) Reporter() status.Reporter {
	if c.Status == nil {
		return status.Discard
	}
	return c.Status
}

// Decode unmarshals the configuration into v, typically a struct with json
// tags matching the attribute names.
func (c Config) Decode(v any) error {
	if len(c.JSON) == 0 {
		return nil
	}
	if err := json.Unmarshal(c.JSON, v); err != nil {
		return fmt.Errorf("decode config of %s: %w", c.Instance, err)
	}
	return nil
}

// Diagnostic is one configuration problem found by a plugin.
type Diagnostic struct {
	// Attribute is the path of the offending value; empty for the block as
	// a whole. An attribute name ("token"), then ".key" for a map or object
	// key and "[n]" for a list element ("guilds[1]", "pacing.min"). The
	// host reports the diagnostic at that value's file:line:col.
	Attribute string
	Summary   string
	Detail    string
	// Warning is printed but does not refuse the block.
	Warning bool
}

// Diagnostics is a list of configuration problems. It is an error so that
// Validate and Configure can return it; the host reports each entry at the attribute's
// position in the config file.
type Diagnostics []Diagnostic

// Add appends an error diagnostic at attr (see Diagnostic.Attribute), so
// that a validate func can report every problem at once:
//
//	var d schema.Diagnostics
//	if c.Token == "" {
//		d.Add("token", "must not be empty", `set it to env("BOT_TOKEN")`)
//	}
func (d *Diagnostics) Add(attr, summary, detail string) {
	*d = append(*d, Diagnostic{Attribute: attr, Summary: summary, Detail: detail})
}

// Error implements error.
func (d Diagnostics) Error() string {
	parts := make([]string, 0, len(d))
	for _, x := range d {
		s := x.Summary
		if x.Attribute != "" {
			s = x.Attribute + ": " + s
		}
		if x.Detail != "" {
			s += ": " + x.Detail
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// DecodeChecked is the usual start of a plugin's Validate and Configure:
// it decodes cfg over start (a Config value holding the defaults that a
// zero cannot express, or the zero value), fills the remaining defaults
// with withDefaults and checks the result with validate, which reports
// every problem at once. Either func may be nil. Method expressions fit:
//
//	c, err := schema.DecodeChecked(cfg, Config{}, Config.withDefaults, Config.validate)
//
// On an error it still returns the config as far as it got (decoded, then
// defaulted), so that a probe can tell which attributes were set; the
// error is a decoding error or the Diagnostics of validate.
func DecodeChecked[C any](cfg Config, start C, withDefaults func(C) C, validate func(C) Diagnostics) (C, error) {
	c := start
	if err := cfg.Decode(&c); err != nil {
		return c, err
	}
	if withDefaults != nil {
		c = withDefaults(c)
	}
	if validate != nil {
		if d := validate(c); len(d) > 0 {
			return c, d
		}
	}
	return c, nil
}
