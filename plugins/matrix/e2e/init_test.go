package e2e

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"maunium.net/go/mautrix"

	"github.com/clawhost/clawhost/core/anthropictest"
	ce2e "github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/plugins/matrix"
	"github.com/clawhost/clawhost/plugins/matrix/matrixtest"
)

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestMatrixInit: clawhost init (the real binary, its answers on stdin)
// offers matrix, checks the bot's password with the plugin's probe, and
// once the files are written starts the plugin, which logs in and makes
// the account's cross-signing keys: init says where their recovery key
// is kept — a 0600 file in the plugin's data directory, the path named —
// and shows neither it nor the password.
func TestMatrixInit(t *testing.T) {
	t.Parallel()
	claude := claudeBin(t)
	hs := matrixtest.Start(t)
	api := anthropictest.New()
	t.Cleanup(api.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bot, err := hs.Register(ctx, "bot", false)
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	bin := filepath.Dir(ce2e.Command(t, filepath.Join(home, "none.hcl")).Path)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "clawhost"), "init", "-claude", claude, "-plugin-dir", bin,
		"-admin-listen", freeAddr(t), "-webchat-listen", freeAddr(t))
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"ANTHROPIC_BASE_URL=" + api.URL(), "ANTHROPIC_API_KEY=test"}
	// The channel, then its settings in the schema's order: homeserver,
	// user_id, access_token (none), password, recovery_key (none: made);
	// then the workspace (the default) and how claude signs in.
	cmd.Stdin = strings.NewReader("matrix\n" + hs.URL + "\n" + bot.UserID.String() + "\n\n" + bot.Password + "\n\n\n3\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("init: %v\n%s", err, out.String())
	}
	text := out.String()
	keyFile := filepath.Join(home, ".local", "state", "clawhost", "plugins", "matrix", matrix.RecoveryKeyFile)
	for _, want := range []string{"✓ password", "✓ cross-signing", "✓ matrix: syncing as " + bot.UserID.String(), keyFile} {
		if !strings.Contains(text, want) {
			t.Errorf("init's output lacks %q:\n%s", want, text)
		}
	}
	fi, err := os.Stat(keyFile)
	if err != nil {
		t.Fatalf("no recovery key file: %v\n%s", err, text)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s is %v, want 0600", keyFile, fi.Mode().Perm())
	}
	rk, _ := os.ReadFile(keyFile)
	if strings.Contains(text, strings.TrimSpace(string(rk))) || strings.Contains(text, bot.Password) {
		t.Errorf("init showed a secret:\n%s", text)
	}
	// The account has cross-signing keys now.
	cli, err := mautrix.NewClient(hs.URL, bot.UserID, bot.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.QueryKeys(ctx, &mautrix.ReqQueryKeys{DeviceKeys: mautrix.DeviceKeysRequest{bot.UserID: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := resp.MasterKeys[bot.UserID]; !ok {
		t.Errorf("the account has no master key after init:\n%s", text)
	}
}
