package config

import (
	"strings"
	"testing"
)

// A PostgreSQL server off this machine is refused unless the url (or
// PGSSLMODE) requires TLS; a local one (socket, localhost, loopback) is not.
func TestStorageTLS(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url  string
		env  map[string]string
		want string // "" when accepted; else the diagnostic names this host
	}{
		{url: "postgres://clawhost:hunter2@db:5432/clawhost", want: "db"},
		{url: "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=disable", want: "db"},
		{url: "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=allow", want: "db"},
		{url: "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=prefer", want: "db"},
		{url: "postgresql://clawhost@10.0.0.7/clawhost", want: "10.0.0.7"},
		{url: "postgres://u@127.0.0.1:5432,db2.example:5432/x?sslmode=prefer", want: "db2.example"},
		{url: "postgres://u@[2001:db8::1]:5432/x", want: "2001:db8::1"},
		{url: "postgres://u@/x?host=db.example", want: "db.example"},
		{url: "host=db.example user=u password=hunter2 dbname=x", want: "db.example"},
		{url: "host=db.example user=u password=hunter2 dbname=x sslmode=disable", want: "db.example"},
		{url: "postgres://u:hunter2@db:5432/x?sslmode=prefer", env: map[string]string{"PGSSLMODE": "verify-full"}, want: "db"},
		{url: "postgres://u@/x", env: map[string]string{"PGHOST": "db.example"}, want: "db.example"},

		{url: "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=verify-full"},
		{url: "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=verify-ca"},
		{url: "postgres://clawhost:hunter2@db:5432/clawhost?sslmode=require"},
		{url: "host=db.example sslmode=require dbname=x"},
		{url: "postgres://u:hunter2@db:5432/x", env: map[string]string{"PGSSLMODE": "verify-full"}},
		{url: "postgres://u:hunter2@localhost:5432/x"},
		{url: "postgres://u:hunter2@127.0.0.1:5432/x?sslmode=disable"},
		{url: "postgres://u:hunter2@[::1]:5432/x?sslmode=disable"},
		{url: "postgres://clawhost@/db?host=/tmp/pg123&port=5432&sslmode=disable"},
		{url: "postgres://clawhost@/db"},
		{url: "host=/var/run/postgresql dbname=x"},
	} {
		env := map[string]string{"URL": tc.url}
		for k, v := range tc.env {
			env[k] = v
		}
		_, diags := parse([]byte("storage {\n  engine = \"postgres\"\n  url    = env(\"URL\")\n}\n"), "c.hcl", "/etc/clawhost", mapEnv(env))
		switch {
		case tc.want == "" && diags.HasErrors():
			t.Errorf("%s %v: refused: %v", tc.url, tc.env, diags)
		case tc.want != "" && !diags.HasErrors():
			t.Errorf("%s %v: accepted, want it refused", tc.url, tc.env)
		case tc.want != "":
			msg := diags.Error()
			if !strings.Contains(msg, "The server "+tc.want+" is not on this machine") || !strings.Contains(msg, "sslmode=verify-full") {
				t.Errorf("%s: diagnostic %q does not name %s or the fix", tc.url, msg, tc.want)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("%s: the diagnostic shows the password: %s", tc.url, msg)
			}
			if d := diags[0]; d.Subject == nil || d.Subject.Start.Line != 2 {
				t.Errorf("%s: diagnostic not at the engine line: %+v", tc.url, d.Subject)
			}
		}
	}
}

// storage { durability } takes "full" (the default) and "process", and is
// refused with the PostgreSQL engine, whose durability is the server's.
func TestStorageDurability(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want string // the durability decoded; "" when refused
	}{
		{body: ``, want: DurabilityFull},
		{body: `durability = "full"`, want: DurabilityFull},
		{body: `durability = "process"`, want: DurabilityProcess},
		{body: `durability = "none"`},
		{body: "engine = \"postgres\"\nurl = \"postgres://u@localhost/x\"\ndurability = \"process\""},
		{body: "engine = \"postgres\"\nurl = \"postgres://u@localhost/x\"", want: DurabilityFull},
	} {
		cfg, diags := parse([]byte("storage {\n"+tc.body+"\n}\n"), "c.hcl", "/etc/clawhost", mapEnv(nil))
		switch {
		case tc.want == "" && !diags.HasErrors():
			t.Errorf("%q: accepted, want it refused", tc.body)
		case tc.want == "" && !strings.Contains(diags.Error(), "durability"):
			t.Errorf("%q: the diagnostic does not name durability: %v", tc.body, diags)
		case tc.want != "" && diags.HasErrors():
			t.Errorf("%q: refused: %v", tc.body, diags)
		case tc.want != "" && cfg.Storage.Durability != tc.want:
			t.Errorf("%q: durability %q, want %q", tc.body, cfg.Storage.Durability, tc.want)
		}
	}
}
