package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sync"
	"testing"
)

func TestString(t *testing.T) {
	t.Parallel()
	r := New("123456:AAH-secret", "hunter2hunter2", "p@ss w0rd/x", "short", "")
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"nothing secret here", "nothing secret here"},
		{"panic: bad token 123456:AAH-secret at start", "panic: bad token [redacted] at start"},
		{"https://api.telegram.org/bot123456:AAH-secret/getMe", "https://api.telegram.org/bot[redacted]/getMe"},
		{"twice hunter2hunter2 and hunter2hunter2", "twice [redacted] and [redacted]"},
		{"in a url: postgres://u:p%40ss+w0rd%2Fx@db/x", "in a url: postgres://u:[redacted]@db/x"},
		{"path form: /p@ss%20w0rd%2Fx/", "path form: /[redacted]/"},
		{"a short value stays: short", "a short value stays: short"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var nilR *Redactor
	if got := nilR.String("x"); got != "x" {
		t.Errorf("nil redactor changed text: %q", got)
	}
}

// A secret containing another is replaced whole, whatever order they
// were added in; one added later applies from then on.
func TestLongestFirstAndLateAdd(t *testing.T) {
	t.Parallel()
	r := New("abcdef")
	r.Add("abcdefghij")
	if got := r.String("x abcdefghij y abcdef"); got != "x [redacted] y [redacted]" {
		t.Errorf("got %q", got)
	}
	if got := r.String(`{"msg":"say \"quoted\" secret"}`); got != `{"msg":"say \"quoted\" secret"}` {
		t.Errorf("changed unrelated text: %q", got)
	}
	r.Add(`say "quoted"`)
	if got := r.String(`{"msg":"say \"quoted\" secret"}`); got != `{"msg":"[redacted] secret"}` {
		t.Errorf("JSON-escaped form not redacted: %q", got)
	}
}

func TestWriterAndError(t *testing.T) {
	t.Parallel()
	r := New("tok-123456")
	var buf bytes.Buffer
	w := r.Writer(&buf)
	in := "level=error msg=\"plugin panicked: tok-123456\"\n"
	n, err := w.Write([]byte(in))
	if err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(in))
	}
	if got := buf.String(); got != "level=error msg=\"plugin panicked: [redacted]\"\n" {
		t.Errorf("written %q", got)
	}
	base := fmt.Errorf("start plugin tg: token tok-123456 refused: %w", fs.ErrPermission)
	e := r.Error(base)
	if e.Error() != "start plugin tg: token [redacted] refused: permission denied" {
		t.Errorf("Error() = %q", e.Error())
	}
	if !errors.Is(e, fs.ErrPermission) {
		t.Errorf("the redacted error no longer wraps the cause")
	}
	if plain := errors.New("nothing"); r.Error(plain) != plain {
		t.Errorf("an error without secrets was wrapped")
	}
	if r.Error(nil) != nil {
		t.Errorf("nil error became non-nil")
	}
}

type inner struct {
	Message string
	Tags    []string
	private string
}

type snapshot struct {
	Title   string
	Items   []inner
	Ptr     *inner
	Info    map[string]string
	Count   int
	Any     any
	private string
}

func TestStrings(t *testing.T) {
	t.Parallel()
	r := New("s3cret-value")
	s := snapshot{
		Title:   "x s3cret-value",
		Items:   []inner{{Message: "a s3cret-value", Tags: []string{"s3cret-value", "ok"}, private: "s3cret-value"}},
		Ptr:     &inner{Message: "s3cret-value!"},
		Info:    map[string]string{"k": "=s3cret-value"},
		Count:   3,
		Any:     "s3cret-value",
		private: "s3cret-value",
	}
	r.Strings(&s)
	want := snapshot{
		Title:   "x [redacted]",
		Items:   []inner{{Message: "a [redacted]", Tags: []string{"[redacted]", "ok"}, private: "s3cret-value"}},
		Ptr:     &inner{Message: "[redacted]!"},
		Info:    map[string]string{"k": "=[redacted]"},
		Count:   3,
		Any:     "[redacted]",
		private: "s3cret-value",
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got  %+v %+v\nwant %+v %+v", s, *s.Ptr, want, *want.Ptr)
	}
}

func TestConcurrentAdd(t *testing.T) {
	t.Parallel()
	r := New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func(i int) { defer wg.Done(); r.Add(fmt.Sprintf("secret-%d", i)) }(i)
		go func() { defer wg.Done(); _ = r.String("secret-1 secret-2") }()
	}
	wg.Wait()
	if got := r.String("secret-1 secret-7"); got != "[redacted] [redacted]" {
		t.Errorf("got %q", got)
	}
}
