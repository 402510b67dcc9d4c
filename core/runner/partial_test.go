package runner

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSeenUsage: the usage of a turn cut before its result is added up
// from claude's lines (shaped as claude 2.1.330 writes them with
// --include-partial-messages): each message once although message_start,
// its assistant lines and message_delta all repeat it, the largest output
// count of a message, the messages summed; a synthetic API-error message
// adds nothing; no cost is made up.
func TestSeenUsage(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","model":"claude-opus-5-5","usage":{"input_tokens":4426,"output_tokens":1,"cache_creation_input_tokens":7,"cache_read_input_tokens":100}}},"api_message_id":"msg_1"}`,
		`{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"usage":{"input_tokens":4426,"output_tokens":1,"cache_creation_input_tokens":7,"cache_read_input_tokens":100}}}`,
		`{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":31}},"api_message_id":"msg_1"}`,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_2","model":"claude-opus-5-5","usage":{"input_tokens":4516,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}},"api_message_id":"msg_2"}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}},"api_message_id":"msg_2"}`,
		// message_delta without the wire line's id: the latest message.
		`{"type":"stream_event","event":{"type":"message_delta","usage":{"output_tokens":9}}}`,
		`{"type":"assistant","message":{"id":"synthetic","model":"<synthetic>","content":[{"type":"text","text":"API Error"}],"usage":{"input_tokens":999,"output_tokens":999}},"is_api_error_message":true}`,
	}
	var s seenUsage
	for _, l := range lines {
		var m wireMsg
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case "stream_event":
			s.streamEvent(m)
		case "assistant":
			s.assistant(m)
		}
	}
	want := Usage{InputTokens: 4426 + 4516, OutputTokens: 31 + 9, CacheReadInputTokens: 100, CacheCreationInputTokens: 7}
	if got := s.total(); !reflect.DeepEqual(got, want) {
		t.Errorf("total %+v, want %+v", got, want)
	}

	var cut Result
	s.cut(&cut)
	if !reflect.DeepEqual(cut.Usage, want) || !cut.UsageSeen || cut.Model != "claude-opus-5-5" || cut.Usage.CostUSD != 0 {
		t.Errorf("cut result %+v", cut)
	}
	// A result claude wrote keeps its own figures.
	reported := Result{Usage: Usage{InputTokens: 1, CostUSD: 0.5}, Model: "m"}
	s.cut(&reported)
	if reported.UsageSeen || reported.Usage.InputTokens != 1 || reported.Model != "m" {
		t.Errorf("a reported usage was replaced: %+v", reported)
	}
	// Nothing seen: nothing made up.
	var none seenUsage
	var empty Result
	none.cut(&empty)
	if empty.UsageSeen || !empty.Usage.zero() {
		t.Errorf("empty %+v", empty)
	}
}
