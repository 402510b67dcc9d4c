package discordtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
)

const token = "FAKE.token.x"

var alice = discordtest.User{ID: "100000000000000101", Username: "alice"}

// call makes one REST call to the fake and returns the status and the
// decoded JSON answer (nil for none).
func call(t *testing.T, srv *discordtest.Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, srv.Endpoint()+"/api/v9"+path, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bot "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &out)
	}
	return resp.StatusCode, out
}

// errorAt returns the first error code of Discord's error tree at path.
func errorAt(answer map[string]any, path ...string) string {
	node, _ := answer["errors"].(map[string]any)
	for _, p := range path {
		node, _ = node[p].(map[string]any)
	}
	errs, _ := node["_errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func button(id, label string) map[string]any {
	return map[string]any{"type": 2, "style": 2, "custom_id": id, "label": label}
}

func row(buttons ...map[string]any) map[string]any {
	return map[string]any{"type": 1, "components": buttons}
}

// TestComponentLimits: a message's buttons are checked as Discord does,
// with its error tree pointing at the field.
func TestComponentLimits(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(token)
	defer srv.Close()
	ch := srv.AddDM(alice)
	five := row(button("a", "a"), button("b", "b"), button("c", "c"), button("d", "d"), button("e", "e"))
	six := row(button("a", "a"), button("b", "b"), button("c", "c"), button("d", "d"), button("e", "e"), button("f", "f"))
	cases := []struct {
		name string
		rows []any
		// path and code of the error; no path: accepted.
		path []string
		code string
	}{
		{name: "five by one", rows: []any{row(button("1", "x")), row(button("2", "x")), row(button("3", "x")), row(button("4", "x")), row(button("5", "x"))}},
		{name: "five wide", rows: []any{five}},
		{name: "six rows", rows: []any{row(button("1", "x")), row(button("2", "x")), row(button("3", "x")), row(button("4", "x")), row(button("5", "x")), row(button("6", "x"))},
			path: []string{"components"}, code: "BASE_TYPE_MAX_LENGTH"},
		{name: "six wide", rows: []any{six}, path: []string{"components", "0", "components"}, code: "BASE_TYPE_MAX_LENGTH"},
		{name: "empty row", rows: []any{row()}, path: []string{"components", "0", "components"}, code: "BASE_TYPE_MIN_LENGTH"},
		{name: "id of 100", rows: []any{row(button(strings.Repeat("i", 100), "x"))}},
		{name: "id of 101", rows: []any{row(button("ok", "x"), button(strings.Repeat("i", 101), "x"))},
			path: []string{"components", "0", "components", "1", "custom_id"}, code: "BASE_TYPE_MAX_LENGTH"},
		{name: "no id", rows: []any{row(button("", "x"))}, path: []string{"components", "0", "components", "0", "custom_id"}, code: "BASE_TYPE_REQUIRED"},
		{name: "duplicate id", rows: []any{row(button("same", "x")), row(button("same", "y"))},
			path: []string{"components", "1", "components", "0", "custom_id"}, code: "COMPONENT_CUSTOM_ID_DUPLICATED"},
		{name: "label of 80", rows: []any{row(button("x", strings.Repeat("é", 80)))}},
		{name: "label of 81", rows: []any{row(button("x", strings.Repeat("é", 81)))},
			path: []string{"components", "0", "components", "0", "label"}, code: "BASE_TYPE_MAX_LENGTH"},
		{name: "link style", rows: []any{row(map[string]any{"type": 2, "style": 5, "custom_id": "x", "label": "x"})},
			path: []string{"components", "0", "components", "0", "style"}, code: "UNION_TYPE_CHOICES"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, ans := call(t, srv, "POST", "/channels/"+ch.ID+"/messages", map[string]any{"content": "q", "components": c.rows})
			if c.path == nil {
				if st != 200 {
					t.Fatalf("status %d %v, want 200", st, ans)
				}
				return
			}
			if st != 400 || ans["code"] != float64(50035) || errorAt(ans, c.path...) != c.code {
				t.Fatalf("status %d %v, want 400 code 50035 with %s at %v", st, ans, c.code, c.path)
			}
		})
	}
}

// TestEditComponents: an edit without "components" keeps the buttons, []
// and null clear them; a message of buttons only needs no content.
func TestEditComponents(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(token)
	defer srv.Close()
	ch := srv.AddDM(alice)
	st, ans := call(t, srv, "POST", "/channels/"+ch.ID+"/messages", map[string]any{"components": []any{row(button("y", "Yes"), button("n", "No"))}})
	if st != 200 {
		t.Fatalf("buttons only: %d %v", st, ans)
	}
	id := ans["id"].(string)
	if m, _ := srv.Message(id); len(m.Components) != 1 || len(m.Components[0].Components) != 2 || m.Components[0].Components[1] != (discordtest.Component{Type: 2, Style: 2, Label: "No", CustomID: "n"}) {
		t.Fatalf("stored %+v", m.Components)
	}
	if st, ans := call(t, srv, "POST", "/channels/"+ch.ID+"/messages", map[string]any{"components": []any{}}); st != 400 || ans["code"] != float64(50006) {
		t.Errorf("empty message: %d %v", st, ans)
	}
	if st, _ := call(t, srv, "PATCH", "/channels/"+ch.ID+"/messages/"+id, map[string]any{"content": "edited"}); st != 200 {
		t.Fatal(st)
	}
	if m, _ := srv.Message(id); len(m.Components) != 1 || m.Content != "edited" {
		t.Errorf("an edit without components: %+v", m)
	}
	if st, _ := call(t, srv, "PATCH", "/channels/"+ch.ID+"/messages/"+id, map[string]any{"components": []any{}}); st != 200 {
		t.Fatal(st)
	}
	if m, _ := srv.Message(id); m.Components == nil || len(m.Components) != 0 {
		t.Errorf("an edit with []: %+v", m.Components)
	}
	if s := srv.Sent(); s[len(s)-1].Components == nil || len(s[len(s)-1].Components) != 0 {
		t.Errorf("Sent.Components of the clearing edit: %#v", s[len(s)-1].Components)
	}
	_, ans = call(t, srv, "POST", "/channels/"+ch.ID+"/messages", map[string]any{"content": "again", "components": []any{row(button("y", "Yes"))}})
	id = ans["id"].(string)
	if st, _ := call(t, srv, "PATCH", "/channels/"+ch.ID+"/messages/"+id, map[string]any{"components": nil}); st != 200 {
		t.Fatal(st)
	}
	if m, _ := srv.Message(id); len(m.Components) != 0 {
		t.Errorf("an edit with null: %+v", m.Components)
	}
	if _, err := srv.PressButton(id, "y", alice); err == nil {
		t.Error("a cleared button could be pressed")
	}
}

// gatewayClient identifies on the fake's gateway and returns the socket.
func gatewayClient(t *testing.T, srv *discordtest.Server) *websocket.Conn {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.Endpoint(), "http")+"/gw/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var hello map[string]any
	if err := ws.ReadJSON(&hello); err != nil || hello["op"] != float64(10) {
		t.Fatalf("hello %v %v", hello, err)
	}
	if err := ws.WriteJSON(map[string]any{"op": 2, "d": map[string]any{"token": token, "intents": discordtest.IntentDirectMessages}}); err != nil {
		t.Fatal(err)
	}
	next(t, ws, "READY")
	return ws
}

// next reads dispatches until one of type typ and returns its d.
func next(t *testing.T, ws *websocket.Conn, typ string) map[string]any {
	t.Helper()
	for {
		var p struct {
			T string         `json:"t"`
			D map[string]any `json:"d"`
		}
		if err := ws.ReadJSON(&p); err != nil {
			t.Fatalf("waiting for %s: %v", typ, err)
		}
		if p.T == typ {
			return p.D
		}
	}
}

// TestPressAndCallback: a press dispatches Discord's INTERACTION_CREATE;
// its callback is accepted once, within the deadline, with a type a
// component interaction takes.
func TestPressAndCallback(t *testing.T) {
	t.Parallel()
	srv := discordtest.NewServer(token)
	defer srv.Close()
	ch := srv.AddDM(alice)
	if _, err := srv.PressButton("1", "y", alice); err == nil {
		t.Error("pressed a button of an unknown message")
	}
	_, ans := call(t, srv, "POST", "/channels/"+ch.ID+"/messages", map[string]any{"content": "ok?", "components": []any{row(button("y", "Yes"))}})
	msgID := ans["id"].(string)
	if _, err := srv.PressButton(msgID, "y", alice); err == nil {
		t.Error("a press without a gateway session reported no error")
	}
	ws := gatewayClient(t, srv)
	if _, err := srv.PressButton(msgID, "n", alice); err == nil {
		t.Error("pressed a button the message does not have")
	}
	in, err := srv.PressButton(msgID, "y", alice)
	if err != nil {
		t.Fatal(err)
	}
	d := next(t, ws, "INTERACTION_CREATE")
	data, _ := d["data"].(map[string]any)
	msg, _ := d["message"].(map[string]any)
	user, _ := d["user"].(map[string]any)
	if d["type"] != float64(3) || d["id"] != in.ID || d["token"] != in.Token || data["custom_id"] != "y" || data["component_type"] != float64(2) ||
		msg["id"] != msgID || len(msg["components"].([]any)) != 1 || user["id"] != alice.ID || d["member"] != nil || data["name"] != nil {
		t.Fatalf("INTERACTION_CREATE %v", d)
	}

	cb := func(id, tok string, typ int) (int, map[string]any) {
		return call(t, srv, "POST", "/interactions/"+id+"/"+tok+"/callback", map[string]any{"type": typ})
	}
	if st, ans := cb(in.ID, "wrong-token", 6); st != 404 || ans["code"] != float64(10062) {
		t.Errorf("wrong token: %d %v", st, ans)
	}
	if st, ans := cb("123", in.Token, 6); st != 404 || ans["code"] != float64(10062) {
		t.Errorf("wrong id: %d %v", st, ans)
	}
	if st, ans := cb(in.ID, in.Token, 6); st != 204 {
		t.Fatalf("deferred update: %d %v", st, ans)
	}
	if st, ans := cb(in.ID, in.Token, 6); st != 400 || ans["code"] != float64(40060) {
		t.Errorf("second answer: %d %v", st, ans)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := srv.WaitCallbacks(ctx, 1)
	if err != nil || len(got) != 1 || got[0].Interaction != in.ID || got[0].Type != discordtest.CallbackDeferredUpdate {
		t.Errorf("callbacks %+v %v, want the one accepted", got, err)
	}
	if n := len(srv.Requests(discordtest.RouteCallback)); n != 4 {
		t.Errorf("%d callback requests recorded, want 4", n)
	}

	cmd := srv.PushCommand(ch, alice, "status", "")
	if st, ans := cb(cmd.ID, cmd.Token, 6); st != 400 || ans["code"] != float64(50035) {
		t.Errorf("deferred update of a slash command: %d %v", st, ans)
	}

	srv.SetInteractionDeadline(time.Nanosecond)
	late, err := srv.PressButton(msgID, "y", alice)
	if err != nil {
		t.Fatal(err)
	}
	if st, ans := cb(late.ID, late.Token, 6); st != 404 || ans["code"] != float64(10062) {
		t.Errorf("answer after the deadline: %d %v", st, ans)
	}
}
