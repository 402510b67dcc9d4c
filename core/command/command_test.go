package command

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"testing"
)

func TestVectorsCommands(t *testing.T) {
	t.Parallel()
	groups := map[string]func(string) bool{
		"commands.hasControlCommand":            HasControlCommand,
		"commands.isControlCommandMessage":      IsControlCommandMessage,
		"commands.isSessionBoundaryCommandText": IsSessionBoundary,
		"commands.hasInlineCommandTokens":       HasInlineCommandTokens,
	}
	for group, fn := range groups {
		for _, tc := range vectors.Load(t, group) {
			t.Run(group+"/"+tc.Name, func(t *testing.T) {
				t.Parallel()
				var in string
				var want bool
				vectors.Unmarshal(t, tc.Input, &in)
				vectors.Unmarshal(t, tc.Expected, &want)
				if got := fn(in); got != want {
					t.Errorf("%q: got %v, want %v", in, got, want)
				}
			})
		}
	}
}

func TestSetParse(t *testing.T) {
	t.Parallel()
	s := NewSet("/Deploy", "status")
	cases := []struct {
		in, name, args string
		ok             bool
	}{
		{"/deploy prod  ", "deploy", "prod", true},
		{"  /STATUS: full", "status", "full", true},
		{"/deployx", "", "", false},
		{"deploy", "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			name, args, ok := s.Parse(tc.in)
			if name != tc.name || args != tc.args || ok != tc.ok {
				t.Errorf("got %q %q %v", name, args, ok)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"/new hi", "/status@x", "/t:", "/", "/\u00e9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		name, _, ok := Default.Parse(text)
		if ok && !Default[name] {
			t.Fatalf("parsed unknown command %q", name)
		}
	})
}
