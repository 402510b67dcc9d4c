package mcpapproval

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Approve hands the whole new approvals file to write (the caller's
// atomic, synced replace) and changes nothing itself when write fails.
func TestApproveReplacesTheFileThroughWrite(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, File), []byte(`{"mcpServers":{"notes":{"command":"notes"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "data", "mcp-approvals.json")
	var wrote []string
	write := func(p string, data []byte) error {
		wrote = append(wrote, p)
		return os.WriteFile(p, data, 0o600)
	}
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	if _, err := Approve(path, "main", ws, "alice", at, write); err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 1 || wrote[0] != path {
		t.Fatalf("write was called with %v, want once with %s", wrote, path)
	}
	before, _ := os.ReadFile(path)
	if _, err := Approved(path, "main", ws); err != nil {
		t.Fatalf("approved file not accepted: %v", err)
	}

	failed := errors.New("disk full")
	if _, err := Approve(path, "other", ws, "bob", at, func(string, []byte) error { return failed }); !errors.Is(err, failed) {
		t.Fatalf("a failed write: err = %v, want %v", err, failed)
	}
	after, _ := os.ReadFile(path)
	if string(after) != string(before) {
		t.Fatalf("a failed write changed the file:\n%s\nwas\n%s", after, before)
	}
	all, err := Read(path)
	if err != nil || len(all) != 1 || all["main"].Servers[0] != "notes" {
		t.Fatalf("Read = %v, %v; want main's approval only", all, err)
	}
}
