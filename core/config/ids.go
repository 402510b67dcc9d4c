package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/clawhost/clawhost/sdk/channel"
)

// The ids of senders and chats written in the configuration (owners,
// allow_from, members, groups, identity_links, a schedule's chat, an
// agent's chats) are recorded by Load as written, with where they are
// (idRef); the plugins say how their ids may be written
// (channel.Capabilities.IDForms, which the host reads from each plugin's
// description before it configures it) and NormalizeIDs rewrites each id
// to the form its plugin reports, so every written form matches. The core
// knows no platform's forms.

// idRef is one id written in the configuration.
type idRef struct {
	instance, id string
	// entry is the value as written ("wa:15551234567"), for messages.
	entry string
	// summary heads the warning about an id no form matches; what names
	// what the id is of ("sender", "chat").
	summary, what string
	subject       *hcl.Range
	// set replaces the id with its canonical form where it is kept.
	set func(canonical string)
	// agent is the agent an agent's chat binds, "" for other ids;
	// binding is then the binding as it is now.
	agent   string
	binding func() string
}

// DirectToSender reports whether the plugin of instance declared that a
// Send to a sender's id reaches that sender privately
// (channel.Capabilities.DirectToSender), as NormalizeIDs was told; false
// for an instance it was not told about.
func (c *Config) DirectToSender(instance string) bool { return c.direct[instance] }

// IDInstances are the plugin instances ids are written for, in file
// order without repeats: the ones whose id forms NormalizeIDs needs.
func (c *Config) IDInstances() []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range c.idRefs {
		if !seen[r.instance] {
			seen[r.instance] = true
			out = append(out, r.instance)
		}
	}
	return out
}

// addIDRef records an id for NormalizeIDs.
func (c *Config) addIDRef(r idRef) { c.idRefs = append(c.idRefs, r) }

// NormalizeIDs rewrites every id of the configuration written for an
// instance in caps to the canonical form of the first of the instance's
// forms it matches, and returns a warning, at the id, for each id that
// matches none (no message of that instance can ever carry it), with the
// forms' hints, and an error for a chat two agents bind once both are
// canonical. An instance absent from caps, or without forms, keeps its ids
// as written; "*" is kept everywhere. Calling it again with the same forms
// changes nothing.
//
// caps are what the instances' plugins described (only IDForms and
// DirectToSender are read); DirectToSender answers from them afterwards.
func (c *Config) NormalizeIDs(caps map[string]channel.Capabilities) hcl.Diagnostics {
	c.direct = map[string]bool{}
	for name, cp := range caps {
		c.direct[name] = cp.DirectToSender
	}
	var diags hcl.Diagnostics
	for _, r := range c.idRefs {
		fs := caps[r.instance].IDForms
		if len(fs) == 0 {
			continue
		}
		canon, ok := CanonicalID(fs, r.id)
		if !ok {
			diags = append(diags, warning(r.subject, r.summary,
				fmt.Sprintf("No %s of plugin %q can have the id in %q: %s.", r.what, r.instance, r.entry, hints(fs))))
			continue
		}
		r.set(canon)
	}
	// Two chats written in different forms may be one: bound twice.
	// (Load reports those written alike.)
	bound := map[string]idRef{}
	for _, r := range c.idRefs {
		if r.agent == "" {
			continue
		}
		b := r.binding()
		o, dup := bound[b]
		if !dup {
			bound[b] = r
			continue
		}
		if o.entry != r.entry {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Chat bound twice", Subject: r.subject,
				Detail: fmt.Sprintf("%q is already bound to agent %q (as %q). A chat, topic or instance is bound to one agent; let the others reach it with switchable = true.", r.entry, o.agent, o.entry)})
		}
	}
	return diags
}

// CanonicalID returns the id a plugin with the given id forms reports for
// what an operator wrote as id, and whether any form matches it: the
// first form whose Pattern matches the whole id (spaces around it
// trimmed) gives its Canonical expansion (the id as written when it has
// none). Without forms, and for "*", the id is kept and matches. A
// pattern that does not compile matches nothing.
func CanonicalID(forms []channel.IDForm, id string) (string, bool) {
	if id == "*" || len(forms) == 0 {
		return id, true
	}
	id = strings.TrimSpace(id)
	for _, f := range forms {
		re, err := regexp.Compile(`^(?:` + f.Pattern + `)$`)
		if err != nil {
			continue
		}
		m := re.FindStringSubmatchIndex(id)
		if m == nil {
			continue
		}
		if f.Canonical == "" {
			return id, true
		}
		return string(re.ExpandString(nil, f.Canonical, id, m)), true
	}
	return id, false
}

// hints joins the hints of forms.
func hints(forms []channel.IDForm) string {
	var hs []string
	for _, f := range forms {
		if f.Hint != "" {
			hs = append(hs, f.Hint)
		}
	}
	if len(hs) == 0 {
		return "the plugin declares no hint"
	}
	return strings.Join(hs, "; ")
}
