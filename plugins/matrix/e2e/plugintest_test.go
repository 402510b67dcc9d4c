package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"
	"maunium.net/go/mautrix/id"

	"github.com/clawhost/clawhost/plugins/matrix/matrixtest"
)

// The test binary doubles as the -inject command of `clawhost plugin
// test`: with CLAWHOST_TEST_MATRIX_INJECT (homeserver URL, user id, token
// and room, space-separated) it sends $CLAWHOST_TEST_TEXT into the room.
func init() {
	if v := os.Getenv("CLAWHOST_TEST_MATRIX_INJECT"); v != "" {
		os.Exit(matrixInject(strings.Fields(v)))
	}
}

func matrixInject(f []string) int {
	if len(f) != 4 {
		fmt.Fprintln(os.Stderr, "inject: want url user token room")
		return 1
	}
	cli, err := mautrix.NewClient(f[0], id.UserID(f[1]), f[2])
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = cli.SendText(ctx, id.RoomID(f[3]), os.Getenv("CLAWHOST_TEST_TEXT"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "inject:", err)
		return 1
	}
	return 0
}

// TestPluginTestMatrix: `clawhost plugin test` passes every check against
// the clawhost-matrix binary on Dendrite, its inbound checks fed by Alice
// writing in her DM with the bot; the token never shows.
func TestPluginTestMatrix(t *testing.T) {
	t.Parallel()
	hs := matrixtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bot, err := hs.Register(ctx, "bot", false)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := hs.Register(ctx, "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := hs.Client(alice).CreateRoom(ctx, &mautrix.ReqCreateRoom{Preset: "trusted_private_chat", IsDirect: true, Invite: []id.UserID{bot.UserID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hs.Client(bot).JoinRoomByID(ctx, dm.RoomID); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := os.Getenv("CLAWHOST_BIN_DIR")
	if bin == "" {
		bin, _ = filepath.Abs("../../../bin")
	}
	cfg := fmt.Sprintf(`{"homeserver":%q,"user_id":%q,"access_token":%q}`, hs.URL, bot.UserID, bot.AccessToken)
	inject := fmt.Sprintf("CLAWHOST_TEST_MATRIX_INJECT='%s %s %s %s' exec '%s'", hs.URL, alice.UserID, alice.AccessToken, dm.RoomID, exe)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "clawhost"), "plugin", "test", "-config-json", cfg, "-inject", inject, filepath.Join(bin, "clawhost-matrix"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if err != nil || !strings.Contains(out.String(), " 0 failed, 0 skipped") || !strings.Contains(out.String(), "PASS  receive_ack_redeliver") {
		t.Errorf("%v\n%s\n%s", err, out.String(), errb.String())
	}
	if strings.Contains(out.String()+errb.String(), bot.AccessToken) {
		t.Error("the token shows")
	}
}
