package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// TestAgentsTelegram: through the real binary, the fake Bot API and the real
// claude CLI, a DM talks to the default agent, the forum group to the agent
// bound to it and one topic of the group to the agent bound to that topic —
// each request reaches the API from that agent's workspace with its prompt.
// /agent switches the DM and back (the earlier conversation resumes), and a
// restart keeps the bindings and the switch.
func TestAgentsTelegram(t *testing.T) {
	rig := newTgClaude(t)
	fake, srv, dir := rig.fake, rig.srv, rig.dir
	ws := map[string]string{}
	for _, a := range []string{"main", "ops", "docs"} {
		ws[a] = filepath.Join(dir, "ws-"+a)
	}
	// Three agents: main by default, ops on the forum group (switchable
	// from a DM), docs on topic 77 of it.
	d := rig.start(t, Host{
		Agent: rig.agent(Attrs{"workspace": ws["main"], "system_prompt": "MAIN-MARKER", "timeout": "60s"}),
		Agents: []Agent{
			{ID: "ops", Attrs: Attrs{"workspace": ws["ops"], "system_prompt": "OPS-MARKER", "chats": []string{"tg:-1001234500002"}, "switchable": true}},
			{ID: "docs", Attrs: Attrs{"workspace": ws["docs"], "system_prompt": "DOCS-MARKER", "chats": []string{"tg:-1001234500002:77"}}},
		},
		Access: Attrs{"dm_policy": "allowlist", "allow_from": []string{"tg:1001"}, "groups": []string{"tg:-1001234500002"},
			"group_allow_from": []string{"tg:2002"}, "require_mention": false},
		Messages: Attrs{"streaming": "off"},
	})

	forum := telegramtest.Supergroup(tgForum, "Forum")
	forum.IsForum = true
	alice := telegramtest.PrivateChat(tgAlice)
	// reaches asserts the request that carried marker came from agent's
	// workspace with its system prompt, and returns the conversation's
	// user texts.
	reaches := func(marker, agent string) []string {
		t.Helper()
		var req *anthropictest.Request
		sdktest.WaitFor(t, "the API request with "+marker, func() bool {
			for _, r := range fake.Requests() {
				if strings.Contains(r.LastUserText(), marker) {
					req = r
				}
			}
			return req != nil
		})
		sys, body := req.SystemText(), string(req.Body)
		for _, a := range []string{"main", "ops", "docs"} {
			want := a == agent
			if strings.Contains(sys, strings.ToUpper(a)+"-MARKER") != want {
				t.Errorf("%s: the system prompt has %s's marker: %v, want %v", marker, a, !want, want)
			}
			if strings.Contains(body, "Primary working directory: "+ws[a]+`\n`) != want {
				t.Errorf("%s: claude ran in %s's workspace: %v, want %v", marker, a, !want, want)
			}
		}
		return req.UserTexts()
	}
	// switched counts, in the prompt that carried marker, the System: line
	// telling agent it took the chat over from another.
	switched := func(marker, agent, from string) int {
		t.Helper()
		for _, r := range fake.Requests() {
			if u := r.LastUserText(); strings.Contains(u, marker) {
				return strings.Count(u, fmt.Sprintf("System: This chat switched to you (agent %q) from agent %q with /agent", agent, from))
			}
		}
		t.Fatalf("no request carried %s", marker)
		return 0
	}
	srv.PushText(alice, tgUser(tgAlice, "Alice"), "dm-one")
	reaches("dm-one", "main")
	tgWaitMessage(t, srv, tgAlice, "dm-one")
	srv.PushText(forum, tgUser(tgBob, "Bob"), "group-one")
	reaches("group-one", "ops")
	srv.PushUpdate(map[string]any{"message": map[string]any{
		"message_id": 900, "date": time.Now().Unix(), "chat": forum, "from": tgUser(tgBob, "Bob"), "text": "topic-one",
		"message_thread_id": tgTopic, "is_topic_message": true,
	}})
	reaches("topic-one", "docs")

	srv.PushText(alice, tgUser(tgAlice, "Alice"), "/agent")
	tgWaitMessage(t, srv, tgAlice, "Agent: main.", "Available: main, ops.")
	// Alice switches her DM to agent (the chat is told told) and sends msg:
	// it reaches agent, whose conversation carries dm-one (main's) or not
	// as carries says, with one line telling agent it took over from from.
	// Each is answered before the next switch: a turn still running at the
	// restart below would run again after it and carry that switch's event
	// itself.
	for _, sw := range []struct {
		agent, told, msg, from string
		carries                bool
	}{
		{"ops", "Now talking to agent ops: a new conversation.", "dm-two", "main", false},
		{"main", "Now talking to agent main: its conversation in this chat goes on.", "dm-three", "ops", true},
	} {
		srv.PushText(alice, tgUser(tgAlice, "Alice"), "/agent "+sw.agent)
		tgWaitMessage(t, srv, tgAlice, sw.told)
		srv.PushText(alice, tgUser(tgAlice, "Alice"), sw.msg)
		if texts := reaches(sw.msg, sw.agent); strings.Contains(strings.Join(texts, "\n"), "dm-one") != sw.carries {
			t.Errorf("%s: %s's conversation carries main's: %v, want %v: %q", sw.msg, sw.agent, !sw.carries, sw.carries, texts)
		}
		if n := switched(sw.msg, sw.agent, sw.from); n != 1 {
			t.Errorf("%s was told of the switch from %s %d times in the prompt of %s, want once", sw.agent, sw.from, n, sw.msg)
		}
		tgWaitMessage(t, srv, tgAlice, sw.msg)
	}
	srv.PushText(alice, tgUser(tgAlice, "Alice"), "/agent ops")
	tgWaitMessage(t, srv, tgAlice, "Now talking to agent ops: its conversation in this chat goes on.")

	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	_ = d.cmd.Wait()
	polls := len(srv.Requests("getUpdates"))
	d.spawn()
	sdktest.WaitFor(t, "the plugin polling again", func() bool { return len(srv.Requests("getUpdates")) > polls })
	srv.PushText(alice, tgUser(tgAlice, "Alice"), "dm-four")
	if texts := reaches("dm-four", "ops"); !strings.Contains(strings.Join(texts, "\n"), "dm-two") {
		t.Errorf("after a restart ops's conversation did not go on: %q", texts)
	}
	// The switch before the restart is told after it, once; the earlier
	// one is not told again.
	if n := switched("dm-four", "ops", "main"); n != 1 {
		t.Errorf("ops was told of the switch before the restart %d times, want once", n)
	}
	srv.PushText(alice, tgUser(tgAlice, "Alice"), "dm-five")
	reaches("dm-five", "ops")
	if n := switched("dm-five", "ops", "main"); n != 0 {
		t.Errorf("the switch was told again: %d", n)
	}
	srv.PushText(forum, tgUser(tgBob, "Bob"), "group-two")
	reaches("group-two", "ops")
}
