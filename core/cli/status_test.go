package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/core/admin"
)

// clawhost status lists the hosts sharing the database, an expired one as
// such, and the other leases with their holder.
func TestFormatStatusCluster(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	out := formatStatus(admin.Snapshot{StartedAt: now.Add(-time.Hour), Cluster: &admin.Cluster{HostID: "h1", Engine: "postgres",
		Hosts: []admin.ClusterHost{
			{ID: "h1", This: true, Live: true, Admin: "127.0.0.1:8791", Version: "1.2.3", PID: 4000, Epoch: 1, Sessions: 7,
				Since: now.Add(-time.Hour), Renewed: now.Add(-2 * time.Second), Expires: now.Add(13 * time.Second)},
			{ID: "h2", PID: 5000, Epoch: 2, Since: now.Add(-2 * time.Hour), Renewed: now.Add(-35 * time.Second), Expires: now.Add(-20 * time.Second)},
		},
		Leases: []admin.Lease{
			{Name: "channel/tg", Kind: "channel", Holder: "h1", Live: true, Epoch: 3, Renewed: now.Add(-2 * time.Second), Expires: now.Add(13 * time.Second)},
			{Name: "channel/dc", Kind: "channel", Holder: "h2", Epoch: 1, Renewed: now.Add(-40 * time.Second), Expires: now.Add(-25 * time.Second)},
		},
	}}, now)
	statusHas(t, out,
		"hosts live 1/2 (this host h1, sharing one postgres database)\n",
		"  h1 (this host) live, expires in 13s, 7 sessions\n",
		"      up since "+now.Add(-time.Hour).Local().Format("2006-01-02 15:04:05")+" (1h00m), renewed 2s ago, epoch 1, pid 4000, admin 127.0.0.1:8791, version 1.2.3\n",
		"  h2             expired 20s ago — its work is taken over by the other hosts, 0 sessions\n",
		"renewed 35s ago, epoch 2, pid 5000\n",
		"leases\n  channel/tg held by h1, renewed 2s ago, expires in 13s, epoch 3\n",
		"  channel/dc held by h2, expired 25s ago, epoch 1\n",
	)

	out = formatStatus(admin.Snapshot{StartedAt: now, Cluster: &admin.Cluster{HostID: "h1", Engine: "postgres", Error: "list leases: connection refused"}}, now)
	statusHas(t, out, "hosts (this host h1, postgres): the leases could not be read: list leases: connection refused\n")
	if out := formatStatus(admin.Snapshot{StartedAt: now}, now); strings.Contains(out, "hosts") || strings.Contains(out, "leases") {
		t.Errorf("status of a host alone mentions hosts or leases:\n%s", out)
	}
}

// clawhost status lists the groups access.groups does not list, with the
// entry to add.
func TestFormatStatusUnlistedGroups(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	out := formatStatus(admin.Snapshot{StartedAt: now.Add(-time.Hour), UnlistedGroups: []admin.UnlistedGroup{
		{ID: "tg:-100777", Title: "Team", Messages: 3, LastSeen: now.Add(-2 * time.Minute)},
	}}, now)
	statusHas(t, out, "access.groups does not list", `"tg:-100777" (Team): 3 messages, last 2m0s ago`)
}

// clawhost status shows the memory of the host and of each process it runs.
func TestFormatStatusMemory(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	out := formatStatus(admin.Snapshot{StartedAt: now.Add(-time.Hour),
		Host:    admin.Process{PID: 10, RSS: 30 << 20, Private: 7 << 20, Heap: 4 << 20},
		Plugins: []admin.Plugin{{Instance: "tg", Source: "telegram", State: "ready", Ready: true, PID: 11, RSS: 18 << 20, Private: 3 << 20}, {Instance: "dc", Source: "discord", State: "missing"}},
		Warm:    []admin.Warm{{Key: "tg:direct:1", PID: 12, RSS: 200 << 20, Private: 150 << 20}},
		WarmPool: &admin.WarmPool{WarmMemory: 2 << 30, MaxWarm: 8, Memory: 160 << 20, Warm: 1, Measured: 1,
			FirstAnswerWarm: admin.FirstAnswer{Turns: 9, P50: 40 * time.Millisecond, P90: 80 * time.Millisecond}},
	}, now)
	statusHas(t, out,
		"warm claude: 1 holding 160.0 MB, limit 2048.0 MB (warm_memory), at most 8 (max_warm)\n",
		"first answer of a returning chat: warm 40 ms median, 80 ms p90 (9 turns); cold none yet\n",
		"memory: host 30.0 MB resident, 7.0 MB private (Go heap 4.0 MB); with plugins and 1 warm claude processes 248.0 MB resident, 160.0 MB private\n",
		"tg             telegram   ready          restarts 0, pid 11, 18.0 MB (3.0 MB private)\n",
		"dc             discord    missing        restarts 0\n",
	)
	if strings.Contains(out, "spare claude") {
		t.Errorf("a spare failure without one:\n%s", out)
	}
	// A spare that could not start is a failing state with what to do.
	out = formatStatus(admin.Snapshot{StartedAt: now, WarmPool: &admin.WarmPool{SpareError: "agent main: could not start: bwrap: Can't find source path"}}, now)
	statusHas(t, out, "spare claude: FAILING: agent main: could not start: bwrap: Can't find source path\n  to do: "+admin.SpareAction+"\n")
}

// TestFormatStatusSandbox: clawhost status says which sandbox claude runs
// in, and why there is none.
func TestFormatStatusSandbox(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	for state, want := range map[string]string{
		"bubblewrap":                             "\nsandbox: bubblewrap\n",
		"unavailable (bubblewrap not installed)": "\nsandbox: unavailable (bubblewrap not installed)\n",
		"":                                       "",
	} {
		out := formatStatus(admin.Snapshot{StartedAt: now.Add(-time.Hour), Sandbox: state}, now)
		if got := strings.Contains(out, "sandbox:"); want == "" && got || want != "" && !strings.Contains(out, want) {
			t.Errorf("sandbox %q: status\n%s", state, out)
		}
	}
}

// clawhost status lists the agents when there are several: where each
// works, what it is bound to, and its warm processes.
func TestFormatStatusAgents(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	one := formatStatus(admin.Snapshot{StartedAt: now, Agents: []admin.Agent{{ID: "main", Workspace: "/ws"}}}, now)
	if strings.Contains(one, "agents:") {
		t.Errorf("one agent listed:\n%s", one)
	}
	out := formatStatus(admin.Snapshot{StartedAt: now, Agents: []admin.Agent{
		{ID: "main", Workspace: "/ws", Switchable: true, Warm: 2},
		{ID: "ops", Workspace: "/ops", Chats: []string{"tg:-100", "tg:-100:7"}, Warm: 1},
	}}, now)
	statusHas(t, out,
		"agents:\n",
		"  main           /ws: every chat no agent binds, switchable, 2 warm\n",
		"  ops            /ops: tg:-100, tg:-100:7, 1 warm\n",
	)
}

// clawhost status says the turns are paused, until when, why, and how to
// retry now; nothing about a pause when there is none.
func TestFormatStatusPaused(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	until := now.Add(25 * time.Minute)
	out := formatStatus(admin.Snapshot{StartedAt: now.Add(-time.Hour), Paused: &admin.Pause{Until: until, Reason: "usage_limit"}}, now)
	statusHas(t, out, "PAUSED until "+until.Local().Format("2006-01-02 15:04 MST")+" (usage limit): claude's limit was reached; messages are kept and run once each at the reset. To retry now: /resume from an owner in a chat.\n")
	if out := formatStatus(admin.Snapshot{StartedAt: now}, now); strings.Contains(out, "PAUSED") {
		t.Errorf("status of a host not paused says PAUSED:\n%s", out)
	}
}

// TestDataDirsOfABrokenFile: commands that reach the running host find its data_dir (and
// admin.json) when the file does not load: a data_dir line read as text, ./data beside the
// file, and init's data_dir for init's file. Before, only ./data beside the file was tried,
// the wrong place for init's layout.
func TestDataDirsOfABrokenFile(t *testing.T) { // not parallel: t.Setenv
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	initDir := filepath.Join(root, "config", "clawhost")
	if err := os.MkdirAll(initDir, 0o700); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(initDir, "config.hcl")
	if err := os.WriteFile(broken, []byte("agent {\n  model = \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := dataDirsOf(broken, nil)
	if want := filepath.Join(root, "state", "clawhost"); !slices.Contains(got, want) {
		t.Errorf("init's file: %q lacks init's data_dir %s", got, want)
	}
	other := filepath.Join(root, "elsewhere", "config.hcl")
	if err := os.MkdirAll(filepath.Dir(other), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte("data_dir = \"/srv/claw/data\"\naccess {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := dataDirsOf(other, nil); len(got) != 2 || got[0] != "/srv/claw/data" || got[1] != filepath.Join(filepath.Dir(other), "data") {
		t.Errorf("a broken file with data_dir: %q", got)
	}
}

// TestFormatStatusNoChannel: a host no enabled plugin of which is a
// channel says so in clawhost status, with what to do; one with a channel
// says nothing of it.
func TestFormatStatusNoChannel(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	out := formatStatus(admin.Snapshot{StartedAt: now, Channels: admin.ChannelsOf(nil)}, now)
	if !strings.Contains(out, "channels: NONE: no channel is configured") || !strings.Contains(out, "  to do: enable a channel plugin in config.hcl") {
		t.Errorf("status:\n%s", out)
	}
	tg := []admin.Plugin{{Instance: "tg", Ready: true, Kinds: []string{"channel"}}}
	if out := formatStatus(admin.Snapshot{StartedAt: now, Plugins: tg, Channels: admin.ChannelsOf(tg)}, now); strings.Contains(out, "channels:") {
		t.Errorf("status with a channel:\n%s", out)
	}
}

// statusHas fails the test for each of wants the status out lacks.
func statusHas(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
