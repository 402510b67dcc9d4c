package core

import (
	"encoding/json"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/pluginhost"
	"github.com/clawhost/clawhost/core/redact"
	"github.com/clawhost/clawhost/sdk/schema"
)

// configSecrets are the secret values cfg holds itself: the storage url's
// password, and the values of agent.env and plugin env entries whose
// names say they are secret. The plugins' sensitive config attributes are
// added when their schema is known (withRedaction).
func configSecrets(cfg *config.Config) []string {
	var out []string
	if cfg.Storage != nil {
		out = append(out, redact.URLPassword(cfg.Storage.URL)...)
	}
	envSecrets := func(env map[string]string) {
		for name, v := range env {
			if redact.SecretName(name) {
				out = append(out, v)
			}
		}
	}
	envSecrets(cfg.Agent.Env)
	for _, p := range cfg.Plugins {
		envSecrets(p.Env)
	}
	return out
}

// withRedaction makes each spec's Decode teach r the values of the
// attributes its plugin's schema marks sensitive, before the plugin is
// configured with them: from then on the plugin's panics and errors show
// them as [redacted].
func withRedaction(specs []pluginhost.Spec, r *redact.Redactor) []pluginhost.Spec {
	for i := range specs {
		decode := specs[i].Decode
		specs[i].Decode = func(s schema.Schema) ([]byte, error) {
			js, err := decode(s)
			if err == nil {
				r.Add(sensitiveValues(s, js)...)
			}
			return js, err
		}
	}
	return specs
}

// sensitiveValues are the strings in the decoded config js of the
// attributes s marks sensitive (a list or map of secrets included).
func sensitiveValues(s schema.Schema, js []byte) []string {
	var obj map[string]any
	if json.Unmarshal(js, &obj) != nil {
		return nil
	}
	var out []string
	var collect func(v any)
	collect = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, e := range v {
				collect(e)
			}
		case map[string]any:
			for _, e := range v {
				collect(e)
			}
		}
	}
	for _, a := range s {
		if a.Sensitive {
			collect(obj[a.Name])
		}
	}
	return out
}
