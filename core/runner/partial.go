package runner

import "encoding/json"

// seenUsage adds up the usage claude's messages report while a turn runs,
// for a turn that ends without a result line (aborted, timed out,
// crashed): the result carries the turn's usage and cost, but a killed
// claude writes none, and the tokens were spent all the same.
//
// Each API request is one message (an id). Its usage appears on the
// stream_event message_start (input and cache tokens, output so far), on
// each "assistant" line of its content blocks (the same figures), and on
// message_delta (the output tokens so far) with --include-partial-messages.
// Per message the largest figure seen is kept, so the lines repeating one
// message count it once; the messages are summed. The cost is not
// estimated: claude prices the tokens, and it never said.
type seenUsage struct {
	byID  map[string]*Usage
	order []string
	// last is the message the latest line was about (message_delta names
	// it only on the wire line).
	last  string
	model string
}

// wireUsage is the usage object of a message or a message_delta.
type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
}

// streamEvent notes the usage of a stream_event line.
func (s *seenUsage) streamEvent(m wireMsg) {
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			ID    string     `json:"id"`
			Model string     `json:"model"`
			Usage *wireUsage `json:"usage"`
		} `json:"message"`
		Usage *wireUsage `json:"usage"`
	}
	if json.Unmarshal(m.Event, &ev) != nil {
		return
	}
	switch ev.Type {
	case "message_start":
		s.note(firstOf(ev.Message.ID, m.APIMessageID), ev.Message.Model, ev.Message.Usage)
	case "message_delta":
		s.note(m.APIMessageID, "", ev.Usage)
	}
}

// assistant notes the usage of an "assistant" line.
func (s *seenUsage) assistant(m wireMsg) {
	if m.IsAPIError {
		return // a synthetic message: no request behind it
	}
	var am struct {
		ID    string     `json:"id"`
		Model string     `json:"model"`
		Usage *wireUsage `json:"usage"`
	}
	if json.Unmarshal(m.Message, &am) != nil {
		return
	}
	s.note(am.ID, am.Model, am.Usage)
}

func (s *seenUsage) note(id, model string, u *wireUsage) {
	if id == "" {
		id = s.last
	}
	if id == "" || u == nil {
		return
	}
	s.last = id
	if model != "" && model != "<synthetic>" {
		s.model = model
	}
	if s.byID == nil {
		s.byID = map[string]*Usage{}
	}
	e := s.byID[id]
	if e == nil {
		e = &Usage{}
		s.byID[id] = e
		s.order = append(s.order, id)
	}
	e.InputTokens = max(e.InputTokens, u.InputTokens)
	e.OutputTokens = max(e.OutputTokens, u.OutputTokens)
	e.CacheReadInputTokens = max(e.CacheReadInputTokens, u.CacheReadInputTokens)
	e.CacheCreationInputTokens = max(e.CacheCreationInputTokens, u.CacheCreationInputTokens)
}

// total is the usage of every message seen; CostUSD stays 0.
func (s *seenUsage) total() Usage {
	var t Usage
	for _, id := range s.order {
		u := s.byID[id]
		t.InputTokens += u.InputTokens
		t.OutputTokens += u.OutputTokens
		t.CacheReadInputTokens += u.CacheReadInputTokens
		t.CacheCreationInputTokens += u.CacheCreationInputTokens
	}
	return t
}

// cut fills the Result of a turn that ended without a result line with
// the usage seen so far (Result.UsageSeen), unless it has a usage of its
// own.
func (s *seenUsage) cut(res *Result) {
	if !res.Usage.zero() || len(s.order) == 0 {
		return
	}
	res.Usage, res.UsageSeen = s.total(), true
	if res.Model == "" {
		res.Model = s.model
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// zero reports whether u holds nothing.
func (u Usage) zero() bool {
	return u.InputTokens == 0 && u.OutputTokens == 0 && u.CacheReadInputTokens == 0 && u.CacheCreationInputTokens == 0 &&
		u.CostUSD == 0 && u.SessionCostUSD == 0 && !u.PerTurnCost && len(u.Models) == 0
}
