package pluginstderr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

func TestStderrLevel(t *testing.T) {
	for _, c := range []struct {
		line string
		want hclog.Level
	}{
		{`{"@level":"warn","@message":"slow"}`, hclog.Warn},
		{`{"@level":"error","@message":"bad"}`, hclog.Error},
		{`{"@level":"info","@message":"ok"}`, hclog.Info},
		{`{"@message":"no level"}`, hclog.Debug},
		{`{"@level":"nonsense"}`, hclog.Debug},
		{"[WARN] plain warning", hclog.Warn},
		{"[ERROR] plain error", hclog.Error},
		{"panic: runtime error", hclog.Error},
		{"fatal error: all goroutines are asleep", hclog.Error},
		{"just text", hclog.Debug},
	} {
		if got := Level(c.line); got != c.want {
			t.Errorf("Level(%q) = %v, want %v", c.line, got, c.want)
		}
	}
}

func TestStderrLogViews(t *testing.T) {
	var l Log
	fmt.Fprint(&l, "one\n{\"@message\":\"two\",\"error\":\"boom\"}\n")
	mark := l.Mark()
	fmt.Fprint(&l, "[WARN] three\nfour\nfi")
	if got := l.Since(mark); strings.Join(got, ",") != "[WARN] three,four" {
		t.Errorf("Since = %q", got)
	}
	if got := l.String(); got != "one | two: boom | [WARN] three | four | fi" {
		t.Errorf("String = %q", got)
	}
	fmt.Fprint(&l, "ve\nsix\nseven\n")
	if got := l.String(); got != "[WARN] three | four | five | six | seven" {
		t.Errorf("String keeps the last %d: %q", tailLines, got)
	}
	if got := l.Tail(2); got != "six\nseven" {
		t.Errorf("Tail(2) = %q", got)
	}
	if got := l.Since(l.Mark() + 5); len(got) != 0 {
		t.Errorf("Since a future mark = %q", got)
	}
	for range maxStderrLines {
		fmt.Fprintln(&l, "x")
	}
	if got := l.Since(0); len(got) > maxStderrLines {
		t.Errorf("kept %d lines, bound %d", len(got), maxStderrLines)
	}
}

func TestGuardLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text\n", "plain text\n"},
		{`{"@message":"ok","@level":"info","n":"x"}` + "\n", `{"@message":"ok","@level":"info","n":"x"}` + "\n"},
		{`{"@message":1,"@level":2,"@timestamp":3}` + "\n", `{"@level":"2","@message":"1"}` + "\n"},
		{`{"@message":"backing off","retry_after":1000000000,"id":500000009,"ratio":0.5,"n":-3}` + "\n", `{"@message":"backing off","id":"500000009","n":"-3","ratio":0.5,"retry_after":"1000000000"}` + "\n"},
		{`{"@message":null}` + "\n", `{"@message":"null"}` + "\n"},
		{`{"@message":"x","@timestamp":false}`, `{"@message":"x"}` + "\n"},
		{`{"not json` + "\n", `{"not json` + "\n"},
	} {
		if got := string(guardLine([]byte(tc.in))); got != tc.want {
			t.Errorf("guardLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
