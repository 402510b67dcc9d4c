package slack

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"github.com/clawhost/clawhost/sdk/status"
)

const (
	testBotToken = "xoxb-test-bot-secret"
	testAppToken = "xapp-test-app-secret"
)

// testWait bounds every wait of these tests.
const testWait = 10 * time.Second

// Users of the tests.
var (
	alice = slacktest.User{ID: "U0000A", Name: "alice", DisplayName: "Alice"}
	bob   = slacktest.User{ID: "U0000B", Name: "bob"}
)

func newServer(t *testing.T) *slacktest.Server {
	t.Helper()
	srv := slacktest.NewServer(testBotToken, testAppToken)
	t.Cleanup(srv.Close)
	return srv
}

// testAdapter is a configured adapter with its log and status reports.
type testAdapter struct {
	*Adapter
	logs    *sdktest.Log
	reports *sdktest.Statuses
}

// newAdapter configures an adapter against srv with extra attributes.
func newAdapter(t *testing.T, srv *slacktest.Server, extra map[string]any) *testAdapter {
	t.Helper()
	return newAdapterIn(t, srv, t.TempDir(), extra)
}

// newAdapterIn is newAdapter with the data directory dir (a restart
// configures a new adapter in the same one).
func newAdapterIn(t *testing.T, srv *slacktest.Server, dir string, extra map[string]any) *testAdapter {
	t.Helper()
	logs := &sdktest.Log{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b := sdktest.ConfigJSON(t, map[string]any{"bot_token": testBotToken, "app_token": testAppToken, "api_endpoint": srv.Endpoint()}, extra)
	reports := &sdktest.Statuses{}
	a := New()
	a.ackWait = 500 * time.Millisecond
	if err := a.Configure(context.Background(), schema.Config{Instance: "sl", JSON: b, Logger: log, DataDir: dir, Status: reports}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("plugin log:\n%s", logs.String())
		}
	})
	return &testAdapter{Adapter: a, logs: logs, reports: reports}
}

// run runs the adapter until the returned stop is called (or the test
// ends) with inbox.
func (a *testAdapter) run(t *testing.T, inbox channel.Inbox) (stop func()) {
	t.Helper()
	return sdktest.RunOK(t, a.Adapter, inbox)
}

// runReady is run, then waits until the adapter reports ready.
func (a *testAdapter) runReady(t *testing.T, inbox channel.Inbox) (stop func()) {
	t.Helper()
	stop = a.run(t, inbox)
	waitState(t, a.reports, status.Ready)
	return stop
}

// bobInGeneral is a fresh server whose workspace has bob and a #general
// channel.
func bobInGeneral(t *testing.T) (*slacktest.Server, slacktest.Channel) {
	t.Helper()
	srv := newServer(t)
	srv.AddUser(bob)
	return srv, srv.AddChannel(slacktest.Channel{Name: "general"})
}

// waitFake waits for a condition on the fake's state.
func waitFake(t *testing.T, srv *slacktest.Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if err := srv.Wait(ctx, what, cond); err != nil {
		t.Fatal(err)
	}
}

func mention(id string) string { return "<@" + id + ">" }

// waitState waits for the first report in state st.
func waitState(t *testing.T, reports *sdktest.Statuses, st status.State) status.Status {
	t.Helper()
	r, _ := reports.Wait(t, 0, "status "+string(st), func(r status.Status) bool { return r.State == st })
	return r
}
