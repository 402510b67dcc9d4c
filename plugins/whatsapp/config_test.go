package whatsapp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/schema"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	cases := []struct {
		name  string
		cfg   map[string]any
		attrs []string // attributes with a diagnostic, in order
	}{
		{"defaults", map[string]any{}, nil},
		{"pair phone", map[string]any{"pair_phone": "+1 (555) 123-4567"}, nil},
		{"pair phone without plus", map[string]any{"pair_phone": "15551234567"}, []string{"pair_phone"}},
		{"pair phone national", map[string]any{"pair_phone": "+0555123456"}, []string{"pair_phone"}},
		{"pair phone letters", map[string]any{"pair_phone": "+1555abc4567"}, []string{"pair_phone"}},
		{"only self chat alone", map[string]any{"only_self_chat": true}, []string{"only_self_chat"}},
		{"self chat", map[string]any{"self_chat": true, "only_self_chat": true}, nil},
		{"pacing", map[string]any{"pacing": map[string]string{"min": "200ms", "max": "2s"}}, nil},
		{"pacing min only above default max", map[string]any{"pacing": map[string]string{"min": "5s"}}, nil},
		{"pacing bad", map[string]any{"pacing": map[string]string{"min": "soon", "mx": "1s"}}, []string{"pacing.min", "pacing.mx"}},
		{"pacing reversed", map[string]any{"pacing": map[string]string{"min": "3s", "max": "1s"}}, []string{"pacing.max"}},
		{"pacing too long", map[string]any{"pacing": map[string]string{"max": "2m"}}, []string{"pacing.max"}},
		{"backlog margin", map[string]any{"backlog_margin": "2m"}, nil},
		{"backlog margin bad", map[string]any{"backlog_margin": "-1s"}, []string{"backlog_margin"}},
		{"web version", map[string]any{"web_version": "2.3000.1031080782"}, nil},
		{"web version bad", map[string]any{"web_version": "2.3000"}, []string{"web_version"}},
		{"device name long", map[string]any{"device_name": strings.Repeat("x", 51)}, []string{"device_name"}},
		{"max download", map[string]any{"max_download_bytes": 1.5}, []string{"max_download_bytes"}},
		{"test server", map[string]any{"server_address": "127.0.0.1:4443", "server_root_key": key}, nil},
		{"test server v6 and localhost", map[string]any{"server_address": "[::1]:4443", "server_root_key": key}, nil},
		{"test server localhost", map[string]any{"server_address": "localhost:4443", "server_root_key": key}, nil},
		{"test server not loopback", map[string]any{"server_address": "10.0.0.1:443", "server_root_key": key}, []string{"server_address"}},
		{"test server public name", map[string]any{"server_address": "web.whatsapp.com:443", "server_root_key": key}, []string{"server_address"}},
		{"test server no port", map[string]any{"server_address": "127.0.0.1", "server_root_key": key}, []string{"server_address"}},
		{"test server without key", map[string]any{"server_address": "127.0.0.1:4443"}, []string{"server_root_key"}},
		{"root key without server", map[string]any{"server_root_key": key}, []string{"server_root_key"}},
		{"root key short", map[string]any{"server_address": "127.0.0.1:1", "server_root_key": "abcd"}, []string{"server_root_key"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b, _ := json.Marshal(c.cfg)
			err := Validate(t.Context(), schema.Config{Instance: "wa", JSON: b})
			var got []string
			if err != nil {
				d, ok := err.(schema.Diagnostics)
				if !ok {
					t.Fatalf("error is not diagnostics: %v", err)
				}
				for _, x := range d {
					got = append(got, x.Attribute)
				}
			}
			if strings.Join(got, ",") != strings.Join(c.attrs, ",") {
				t.Errorf("diagnostics at %q, want %q (%v)", got, c.attrs, err)
			}
		})
	}
}

func TestConfigValues(t *testing.T) {
	t.Parallel()
	b, _ := json.Marshal(map[string]any{"pair_phone": "+44 20 7946 0958", "pacing": map[string]string{"min": "5s"}, "read_receipts": false, "backlog_margin": "0s"})
	s, err := decodeConfig(schema.Config{JSON: b})
	if err != nil {
		t.Fatal(err)
	}
	if s.pairPhone != "442079460958" || s.pacingMin != 5*time.Second || s.pacingMax != 5*time.Second || s.readReceipts || s.backlogMargin != 0 || s.deviceName != DefaultDeviceName {
		t.Errorf("settings %+v", s)
	}
	// Every schema default decodes and validates.
	defaults := map[string]any{}
	for _, a := range Schema {
		defaults[a.Name] = a.Default
	}
	b, _ = json.Marshal(defaults)
	if s, err := decodeConfig(schema.Config{JSON: b}); err != nil || s.pacingMin != DefaultPacingMin || s.pacingMax != DefaultPacingMax || !s.readReceipts {
		t.Errorf("schema defaults: %+v, %v", s, err)
	}
}
