package fakeclaude

import "testing"

func TestPendingUser(t *testing.T) {
	for _, c := range []struct{ prompt, want string }{
		{"just one", "just one"},
		{"User: first\nAssistant: echo: first\nUser: second #mark=b", "second #mark=b"},
		{"User: a\nAssistant: echo: a\nUser: b\nUser: c", "b\nc"},
		{"User: a\nUser: b", "a\nb"},
		{"User: only\nAssistant: answered", ""},
		{"  spaced  \n", "spaced"},
	} {
		if got := pendingUser(c.prompt); got != c.want {
			t.Errorf("pendingUser(%q) = %q, want %q", c.prompt, got, c.want)
		}
	}
}

func TestPrintModeIsOptIn(t *testing.T) {
	for _, c := range []struct {
		env  string
		args []string
		want bool
	}{
		{"1", []string{"claude", "-p", "--output-format", "json", "-"}, true},
		{"1", []string{"claude", "--print"}, true},
		{"", []string{"claude", "-p", "--output-format", "json"}, false},
		{"1", []string{"claude", "-p", "--output-format", "stream-json", "--input-format", "stream-json"}, false},
		{"1", []string{"claude", "--input-format", "stream-json"}, false},
	} {
		t.Setenv(PrintEnvVar, c.env)
		if got := printMode(c.args); got != c.want {
			t.Errorf("%s=%q %v: print mode %v, want %v", PrintEnvVar, c.env, c.args, got, c.want)
		}
	}
}
