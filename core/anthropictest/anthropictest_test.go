package anthropictest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, s *Server, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(s.URL()+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// sseEvents reads an SSE body into (event, data) pairs and checks event == data.type.
func sseEvents(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			if m["type"] != event {
				t.Fatalf("event %q carries data type %v", event, m["type"])
			}
			out = append(out, m)
		}
	}
	return out
}

const helloBody = `{"model":"claude-test","max_tokens":100,"stream":true,"system":[{"type":"text","text":"sys"}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"hello"}]},{"role":"system","content":"env"}]}`

func TestEchoStream(t *testing.T) {
	t.Parallel()
	s := New()
	defer s.Close()
	resp := post(t, s, helloBody)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, content-type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := sseEvents(t, resp)
	var types []string
	var text strings.Builder
	for _, e := range events {
		types = append(types, e["type"].(string))
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text.WriteString(d["text"].(string))
		}
	}
	want := "message_start content_block_start ping content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events %q, want %q", got, want)
	}
	if text.String() != "echo: hello" {
		t.Fatalf("text %q", text.String())
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "claude-test" || reqs[0].SystemText() != "sys" || reqs[0].Query != "beta=true" {
		t.Fatalf("recorded %+v", reqs)
	}
	if got := reqs[0].UserTexts(); len(got) != 1 || got[0] != "hello" {
		t.Fatalf("user texts %q", got)
	}
	if reqs[0].LastTokenAt().IsZero() {
		t.Fatal("last token time not recorded")
	}
}

func TestChunksAndQueue(t *testing.T) {
	t.Parallel()
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Text: "abcdefghij", Chunks: 3, ChunkDelay: time.Millisecond}, Overloaded())
	events := sseEvents(t, post(t, s, helloBody))
	var deltas []string
	for _, e := range events {
		if d, ok := e["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			deltas = append(deltas, d["text"].(string))
		}
	}
	if strings.Join(deltas, "|") != "abc|def|ghij" {
		t.Fatalf("deltas %q", deltas)
	}
	resp := post(t, s, helloBody)
	var body struct {
		Type  string `json:"type"`
		Error struct{ Type, Message string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 529 || body.Type != "error" || body.Error.Type != "overloaded_error" || body.Error.Message != "Overloaded" {
		t.Fatalf("got %d %+v", resp.StatusCode, body)
	}
	// Queue empty again: echo.
	events = sseEvents(t, post(t, s, helloBody))
	if len(events) != 7 {
		t.Fatalf("echo after queue: %d events", len(events))
	}
}

func TestErrorsAndHeaders(t *testing.T) {
	t.Parallel()
	s := New()
	defer s.Close()
	no := false
	s.SetResponder(func(r *Request) Reply {
		rep := PromptTooLong()
		rep.ShouldRetry = &no
		return rep
	})
	resp := post(t, s, helloBody)
	var body struct {
		Error struct{ Type, Message string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 400 || body.Error.Type != "invalid_request_error" ||
		body.Error.Message != "prompt is too long: 250000 tokens > 200000 maximum" || resp.Header.Get("x-should-retry") != "false" {
		t.Fatalf("got %d %+v %v", resp.StatusCode, body, resp.Header)
	}
}

func TestNonStreaming(t *testing.T) {
	t.Parallel()
	s := New()
	defer s.Close()
	resp := post(t, s, strings.Replace(helloBody, `"stream":true`, `"stream":false`, 1))
	var msg struct {
		Type       string
		StopReason string `json:"stop_reason"`
		Content    []Block
		Usage      struct {
			InputTokens int `json:"input_tokens"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.StopReason != "end_turn" || len(msg.Content) != 1 || msg.Content[0].Text != "echo: hello" || msg.Usage.InputTokens < 1 {
		t.Fatalf("got %+v", msg)
	}
}

func TestWaitRequestAndHeaderDelay(t *testing.T) {
	t.Parallel()
	s := New()
	defer s.Close()
	s.Enqueue(Reply{Text: "slow", HeaderDelay: 200 * time.Millisecond})
	go func() {
		resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(helloBody))
		if err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := s.WaitRequest(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status() != 0 {
		t.Fatalf("status %d before header delay ended", r.Status())
	}
	r, err = s.WaitDone(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status() != 200 || r.LastTokenAt().Sub(r.Arrived) < 200*time.Millisecond {
		t.Fatalf("status %d, last token after %v", r.Status(), r.LastTokenAt().Sub(r.Arrived))
	}
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := s.WaitRequest(short, 2); err == nil {
		t.Fatal("WaitRequest for a request that never comes returned nil")
	}
}

func TestOtherEndpoints(t *testing.T) {
	t.Parallel()
	s := New()
	defer s.Close()
	req, _ := http.NewRequest(http.MethodHead, s.URL()+"/api/hello", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /api/hello: %v %v", resp, err)
	}
	resp.Body.Close()
	resp = func() *http.Response {
		r, err := http.Post(s.URL()+"/v1/messages/count_tokens", "application/json", strings.NewReader(helloBody))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}()
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&ct)
	resp.Body.Close()
	if ct.InputTokens < 1 {
		t.Fatalf("count_tokens %+v", ct)
	}
	resp, err = http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct{ Data []struct{ ID string } }
	_ = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) == 0 {
		t.Fatal("no models")
	}
	if s.Count() != 0 {
		t.Fatal("non-messages endpoints were recorded as messages requests")
	}
}

// TestServeManual keeps a fake running for manual experiments:
// ANTHROPICTEST_SERVE=60s go test -run TestServeManual -v ./core/anthropictest
func TestServeManual(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("ANTHROPICTEST_SERVE"))
	if err != nil {
		t.Skip("set ANTHROPICTEST_SERVE=<duration> to run")
	}
	s := New()
	defer s.Close()
	s.SetResponder(func(r *Request) Reply {
		t.Logf("request %d: %d messages, users %q", r.Seq, len(r.Messages), r.UserTexts())
		if strings.Contains(r.LastUserText(), "slow") {
			return Reply{Text: "slow reply " + r.LastUserText(), Chunks: 5, ChunkDelay: time.Second}
		}
		return Reply{}
	})
	_ = os.WriteFile("/tmp/anthropictest.url", []byte(s.URL()), 0o600)
	t.Logf("serving on %s", s.URL())
	time.Sleep(d)
}
