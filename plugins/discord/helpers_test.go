package discord

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clawhost/clawhost/plugins/discord/discordtest"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

const testToken = "TEST.token-secret_part.xyz"

// testWait bounds every wait of these tests.
const testWait = 10 * time.Second

// Users of the tests.
var (
	alice = discordtest.User{ID: "100000000000000101", Username: "alice", GlobalName: "Alice"}
	bob   = discordtest.User{ID: "100000000000000102", Username: "bob"}
	other = discordtest.User{ID: "100000000000000199", Username: "otherbot", Bot: true}
)

const guildID = "300000000000000001"

func newServer(t *testing.T) *discordtest.Server {
	t.Helper()
	srv := discordtest.NewServer(testToken)
	t.Cleanup(srv.Close)
	return srv
}

// testAdapter is a configured adapter with its log and status reports.
type testAdapter struct {
	*Adapter
	logs    *sdktest.Log
	reports *sdktest.Statuses
	dir     string
	srv     *discordtest.Server
}

// newAdapter configures an adapter against srv with extra attributes; dir
// is its data dir ("" for a fresh one).
func newAdapter(t *testing.T, srv *discordtest.Server, dir string, extra map[string]any) *testAdapter {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	logs := &sdktest.Log{}
	log := logs.Logger()
	b := sdktest.ConfigJSON(t, map[string]any{"token": testToken, "api_endpoint": srv.Endpoint()}, extra)
	reports := &sdktest.Statuses{}
	a := New()
	a.identifyGap = 0
	a.invalidPause = func() time.Duration { return 10 * time.Millisecond }
	if err := a.Configure(context.Background(), schema.Config{Instance: "dc", JSON: b, Logger: log, DataDir: dir, Status: reports}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("plugin log:\n%s", logs.String())
		}
	})
	return &testAdapter{Adapter: a, logs: logs, reports: reports, dir: dir, srv: srv}
}

// aliceDM is a fresh server with a DM channel with alice, and an adapter
// configured against it.
func aliceDM(t *testing.T) (*discordtest.Server, discordtest.Channel, *testAdapter) {
	t.Helper()
	srv := newServer(t)
	dm := srv.AddDM(alice)
	return srv, dm, newAdapter(t, srv, "", nil)
}

// liveInGeneral is a fresh server with a #general channel and an adapter
// running against it with a live gateway connection (runLive).
func liveInGeneral(t *testing.T) (*discordtest.Server, discordtest.Channel, *testAdapter, *sdktest.Inbox) {
	t.Helper()
	srv := newServer(t)
	general := guildChannel(srv, "general")
	a := newAdapter(t, srv, "", nil)
	inbox := &sdktest.Inbox{}
	a.runLive(t, inbox)
	return srv, general, a, inbox
}

// run runs the adapter until the returned stop is called (or the test
// ends) with inbox.
func (a *testAdapter) run(t *testing.T, inbox channel.Inbox) (stop func()) {
	t.Helper()
	return sdktest.RunOK(t, a.Adapter, inbox)
}

// runLive is run, then waits until the adapter's gateway connection is
// live after its first IDENTIFY.
func (a *testAdapter) runLive(t *testing.T, inbox channel.Inbox) (stop func()) {
	t.Helper()
	stop = a.run(t, inbox)
	waitLive(t, a.srv, 1)
	return stop
}

// waitLive waits until the fake has seen handshakes IDENTIFY+RESUME
// payloads and a connection is live.
func waitLive(t *testing.T, srv *discordtest.Server, handshakes int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if err := srv.WaitLive(ctx, handshakes); err != nil {
		t.Fatal(err)
	}
}

func text(msgs []channel.InboundMessage) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Text)
	}
	return out
}

// guildChannel adds a text channel of the test guild.
func guildChannel(srv *discordtest.Server, name string) discordtest.Channel {
	return srv.AddChannel(discordtest.Channel{Type: discordtest.ChannelGuildText, GuildID: guildID, Name: name})
}

func mention(id string) string { return fmt.Sprintf("<@%s>", id) }
