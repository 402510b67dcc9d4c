package gateway

import (
	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/sessionkey"
)

// storedKey reads a session key that comes back from the store in its
// stored form (Key.String): a queued entry's, a session row's, the
// sessions a usage-limit pause held. This file is the gateway's only edge
// where a key's string becomes a Key again; inside the pipeline the key
// travels typed. A string that does not parse (none is written so) is a
// defect, logged; it is then the default agent's.
func storedKey(log hclog.Logger, s string) sessionkey.Key {
	k, err := sessionkey.Parse(s)
	if err != nil {
		log.Error("a stored session key without its agent", "session", s, "error", err)
		return sessionkey.Key{Agent: sessionkey.DefaultAgent, Chat: s}
	}
	return k
}

// SessionAgent is the agent of the session stored under key, for readers
// of the store outside the pipeline (`clawhost sessions`); ok false when
// key is no session's.
func SessionAgent(key string) (agent string, ok bool) {
	k, err := sessionkey.Parse(key)
	return k.Agent, err == nil
}
