package tables

import (
	"errors"
	"fmt"

	"github.com/clawhost/clawhost/core/store"
)

// CheckToolResult is what [store.ToolResults]' RecordToolResult requires of
// r, checked before the engine writes.
func CheckToolResult(r store.ToolResult) error {
	switch {
	case r.Key == "" || r.JournalID <= 0:
		return errors.New("record tool result: a key and a journal id are required")
	case len(r.Result) > store.MaxToolResult:
		return fmt.Errorf("record tool result: %d bytes, more than %d", len(r.Result), store.MaxToolResult)
	}
	return nil
}

// RecordToolResult is [store.ToolResults]' RecordToolResult inside t, r.At
// set by the caller: the first result of a key stays.
func RecordToolResult(t Tx, r store.ToolResult) error {
	_, err := t.Exec(`INSERT INTO tool_results(key, journal_id, result, at) VALUES (?, ?, ?, ?) ON CONFLICT(key) DO NOTHING`,
		r.Key, r.JournalID, r.Result, r.At.UnixNano())
	return err
}

// ToolResult is [store.ToolResults]' ToolResult: store.ErrNotFound when
// the key has none.
func ToolResult(r Reader, key string) (store.ToolResult, error) {
	var res store.ToolResult
	var at int64
	err := r.Scan(`SELECT key, journal_id, result, at FROM tool_results WHERE key = ?`, []any{key}, &res.Key, &res.JournalID, &res.Result, &at)
	if errors.Is(err, ErrNoRows) {
		return store.ToolResult{}, store.ErrNotFound
	}
	res.At = store.FromUnixNano(at)
	return res, err
}
