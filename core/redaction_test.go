package core

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"github.com/clawhost/clawhost/core/config"
	"github.com/clawhost/clawhost/core/redact"
	"github.com/clawhost/clawhost/sdk/schema"
)

func TestSecretName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "ANTHROPIC_API_KEY": true, "DB_PASSWORD": true, "AWS_SECRET_ACCESS_KEY": true,
		"OPENAI_APIKEY": true, "SSH_PRIVATE_KEY": true, "MY_KEY": true, "BASIC_AUTH": true,
		"ANTHROPIC_BASE_URL": false, "HTTPS_PROXY": false, "IS_SANDBOX": false, "KEYBOARD": false, "LANG": false,
	} {
		if got := redact.SecretName(name); got != want {
			t.Errorf("redact.SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestConfigSecrets(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Storage.URL = "postgres://u:db-pass-123@db:5432/x?sslmode=verify-full"
	cfg.Agent.Env = map[string]string{"GITHUB_TOKEN": "ghp_abcdef", "ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}
	cfg.Plugins = []*config.Plugin{{Name: "tg", Env: map[string]string{"PROXY_PASSWORD": "proxy-pw-1", "HTTPS_PROXY": "http://proxy"}}}
	got := configSecrets(cfg)
	sort.Strings(got)
	want := []string{"db-pass-123", "ghp_abcdef", "proxy-pw-1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("configSecrets = %q, want %q", got, want)
	}
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{"", nil},
		{"postgres://u@db/x", nil},
		{"postgres://u:pw1@db/x?password=pw2", []string{"pw1", "pw2"}},
		{"host=db password=pw4 dbname=x", []string{"pw4"}},
	} {
		if got := redact.URLPassword(tc.url); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("redact.URLPassword(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

func TestSensitiveValues(t *testing.T) {
	t.Parallel()
	s := schema.Schema{
		{Name: "token", Type: "string", Sensitive: true},
		{Name: "keys", Type: "list(string)", Sensitive: true},
		{Name: "creds", Type: "map(string)", Sensitive: true},
		{Name: "listen", Type: "string"},
		{Name: "unset", Type: "string", Sensitive: true},
	}
	js, _ := json.Marshal(map[string]any{"token": "t-123456", "keys": []string{"k1-123456", "k2-123456"},
		"creds": map[string]string{"a": "c-123456"}, "listen": "127.0.0.1:1", "unset": nil})
	got := sensitiveValues(s, js)
	sort.Strings(got)
	want := []string{"c-123456", "k1-123456", "k2-123456", "t-123456"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sensitiveValues = %q, want %q", got, want)
	}
}
