package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/clawhost/clawhost/core/command"
	"github.com/clawhost/clawhost/core/config"
)

// Schedules added from chat are checked, kept in data_dir/schedules.json
// (0600) across a restart, listed with the file's, and removable; the
// file's are not.
func TestChatSchedules(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.hcl")
	src := "data_dir = \"./data\"\nplugin \"tg\" {\n  source = \"telegram\"\n  enabled = false\n}\nschedule \"file\" {\n  cron = \"0 9 * * *\"\n  chat = \"tg:1\"\n  prompt = \"p\"\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, diags := config.Load(path)
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	newSched := func() *scheduler {
		s := &scheduler{h: &Host{log: hclog.NewInterceptLogger(&hclog.LoggerOptions{Output: &strings.Builder{}})}}
		s.start(cfg)
		t.Cleanup(s.stop)
		return s
	}
	ctx := context.Background()
	s := newSched()
	add := command.ScheduleEntry{Name: "standup", Cron: "0 9 * * 1-5", Chat: "tg:42", Prompt: "summarize"}
	if err := s.Add(ctx, add); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []command.ScheduleEntry{
		{Name: "standup", Cron: "0 9 * * *", Chat: "tg:42", Prompt: "x"},   // taken
		{Name: "file", Cron: "0 9 * * *", Chat: "tg:42", Prompt: "x"},      // the file's
		{Name: "heartbeat", Cron: "0 9 * * *", Chat: "tg:42", Prompt: "x"}, // reserved
		{Name: "bad cron", Cron: "0 9 * *", Chat: "tg:42", Prompt: "x"},
		{Name: "late", Cron: "0 25 * * *", Chat: "tg:42", Prompt: "x"},
	} {
		if err := s.Add(ctx, bad); err == nil {
			t.Errorf("added %+v", bad)
		}
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, "schedules.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("schedules file: %v %v", fi, err)
	}
	s.stop()
	s = newSched() // a restart
	list := s.List(ctx)
	if len(list) != 2 || list[0].Name != "file" || !list[0].FromFile || list[1].Name != "standup" || list[1].FromFile || list[1].Next.IsZero() {
		t.Fatalf("list %+v", list)
	}
	if ok, _ := s.Remove(ctx, "file"); ok {
		t.Error("removed the file's schedule from chat")
	}
	if ok, err := s.Remove(ctx, "standup"); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if list := s.List(ctx); len(list) != 1 {
		t.Errorf("after remove %+v", list)
	}
}
