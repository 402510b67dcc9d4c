package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.mau.fi/whatsmeow/types"

	"github.com/clawhost/clawhost/core/anthropictest"
	"github.com/clawhost/clawhost/core/setup"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
	"github.com/clawhost/clawhost/plugins/whatsapp/whatsapptest"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

// initTGToken is the token the fake Telegram of the init tests accepts.
const initTGToken = "424242:INITTOKEN"

// initUser is the Telegram user who claims the bot with /owner.
const initUser = 5151

var ownerCodeRE = regexp.MustCompile(`/owner ([A-Z0-9]{8})`)

// initEnv is a new user's machine: a home with nothing in it, the XDG
// directories inside it, the fakes' addresses, free ports for the admin
// endpoint and the web chat, and the real claude CLI.
type initEnv struct {
	home, claude, admin, web string
	tg                       *telegramtest.Server
	api                      *anthropictest.Server
}

func newInitEnv(t *testing.T) *initEnv {
	t.Helper()
	e := &initEnv{home: t.TempDir(), claude: clClaudeBin(t), admin: sdktest.FreeAddr(t), web: sdktest.FreeAddr(t)}
	e.tg = telegramtest.NewServer(initTGToken)
	t.Cleanup(e.tg.Close)
	e.api = anthropictest.New()
	t.Cleanup(e.api.Close)
	return e
}

// environ is the user's environment: no token in it (init writes it to
// clawhost.env), the fake Anthropic API for claude.
func (e *initEnv) environ() []string {
	return []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(e.home, ".config"), "XDG_STATE_HOME=" + filepath.Join(e.home, ".local", "state"),
		"ANTHROPIC_BASE_URL=" + e.api.URL(), "ANTHROPIC_API_KEY=test"}
}

// initArgs are the flags both tests give: what a user's machine would find
// by itself (the fake's address, the claude CLI, ports not taken by the
// other tests running at the same time).
func (e *initEnv) initArgs(t *testing.T) []string {
	return []string{"-telegram-api", e.tg.APIEndpoint(), "-claude", e.claude, "-plugin-dir", binDir(t), "-admin-listen", e.admin, "-webchat-listen", e.web}
}

// checkWritten checks what init wrote: outside the checkout, in the XDG
// directories, the token only in the 0600 env file.
func (e *initEnv) checkWritten(t *testing.T) {
	t.Helper()
	cfg := filepath.Join(e.home, ".config", "clawhost", "config.hcl")
	envFile := filepath.Join(e.home, ".config", "clawhost", "clawhost.env")
	text, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatalf("init wrote no %s: %v", cfg, err)
	}
	if strings.Contains(string(text), initTGToken) {
		t.Errorf("the token is in config.hcl:\n%s", text)
	}
	if fi, err := os.Stat(envFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("clawhost.env: %v (want mode 0600)", err)
	}
	if b, _ := os.ReadFile(envFile); !strings.Contains(string(b), initTGToken) {
		t.Errorf("clawhost.env lacks the token")
	}
	checkout, _ := filepath.Abs("../..")
	if strings.HasPrefix(cfg, checkout+string(filepath.Separator)) {
		t.Errorf("config %s is inside the checkout %s", cfg, checkout)
	}
	if !strings.Contains(string(text), filepath.Join(e.home, ".local", "state", "clawhost")) {
		t.Errorf("data_dir is not under XDG_STATE_HOME:\n%s", text)
	}
}

// runAndClaim runs `clawhost run` as the user would, without -config and
// from a directory without a config.hcl: it must find the user's file and
// read the token from clawhost.env. A stranger's "/owner CODE" makes them
// the owner and the bot answers them.
func (e *initEnv) runAndClaim(t *testing.T, code string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir(t), "clawhost"), "run")
	cmd.Dir = t.TempDir()
	cmd.Env = e.environ()
	log := Run(t, cmd)
	dm := telegramtest.PrivateChat(initUser)
	me := tgUser(initUser, "New Owner")
	e.tg.PushText(dm, me, "/owner WRONG234")
	tgWaitMessage(t, e.tg, initUser, "not valid")
	e.tg.PushText(dm, me, "/owner "+code)
	tgWaitMessage(t, e.tg, initUser, "You are the owner")
	e.tg.PushText(dm, me, "hello from init-marker")
	tgWaitMessage(t, e.tg, initUser, "echo:", "init-marker")
	owners, err := os.ReadFile(filepath.Join(e.home, ".local", "state", "clawhost", "owners.json"))
	if err != nil || !strings.Contains(string(owners), fmt.Sprintf(`"tg:%d"`, initUser)) {
		t.Errorf("owners.json: %v\n%s", err, owners)
	}
	if strings.Contains(log.String(), initTGToken) || strings.Contains(log.String(), code) {
		t.Error("the token or the owner code is in the log")
	}
}

func TestInitNonInteractive(t *testing.T) {
	e := newInitEnv(t)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(binDir(t), "clawhost"), append([]string{"init", "-non-interactive"}, append(e.initArgs(t), args...)...)...)
		cmd.Env, cmd.Dir = e.environ(), t.TempDir()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("-telegram-token", "424242:WRONG"); err == nil || !strings.Contains(out, "refused this token") {
		t.Fatalf("a wrong token: %v\n%s", err, out)
	}
	out, err := run("-telegram-token", initTGToken)
	if err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	if !strings.Contains(out, "@clawbot") {
		t.Errorf("the bot is not named:\n%s", out)
	}
	m := ownerCodeRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no owner code in:\n%s", out)
	}
	e.checkWritten(t)
	if out, err := run("-telegram-token", initTGToken); err == nil || !strings.Contains(out, "-force") {
		t.Errorf("a second init overwrote without -force: %v\n%s", err, out)
	}
	e.runAndClaim(t, m[1])
}

// tmuxSession is a terminal: a tmux server of its own running one command.
type tmuxSession struct {
	t    *testing.T
	sock string
}

func startTmux(t *testing.T, env []string, argv []string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CLAWHOST_REQUIRE_TMUX") == "1" {
			t.Fatal("tmux not found (make tmux)")
		}
		t.Skip("tmux not installed (make tmux); set CLAWHOST_REQUIRE_TMUX=1 to fail instead")
	}
	s := &tmuxSession{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	var quoted []string
	for _, a := range append(append([]string{"env", "-i"}, env...), argv...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	shell := strings.Join(quoted, " ") + "; echo INIT-EXIT=$?; sleep 600"
	s.tmux("new-session", "-d", "-s", "init", "-x", "220", "-y", "60", shell)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.sock, "kill-server").Run() })
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the terminal shows, with its scrollback.
func (s *tmuxSession) screen() string {
	return s.tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "init")
}

// waitFor waits until the screen shows want after its first n
// occurrences, and returns the screen.
func (s *tmuxSession) waitFor(want string, n int) string {
	s.t.Helper()
	var scr string
	sdktest.WaitFor(s.t, fmt.Sprintf("the terminal to show %q", want), func() error {
		scr = s.screen()
		return sdktest.Saw(strings.Count(scr, want) > n, "the terminal shows:\n%s", scr)
	})
	return scr
}

// send types text and Enter.
func (s *tmuxSession) send(text string) {
	s.t.Helper()
	if text != "" {
		s.tmux("send-keys", "-t", "init", "-l", text)
	}
	s.tmux("send-keys", "-t", "init", "Enter")
}

// tmuxTurn is one exchange of a terminal dialog: wait until the screen
// shows want after its first n occurrences, then type reply and Enter
// (nothing typed when only is set: the turn only waits).
type tmuxTurn struct {
	want  string
	n     int
	reply string
	only  bool
}

// ask waits for the first want and answers reply.
func ask(want, reply string) tmuxTurn { return tmuxTurn{want: want, reply: reply} }

// askAgain waits for want after its first n occurrences and answers reply.
func askAgain(want string, n int, reply string) tmuxTurn {
	return tmuxTurn{want: want, n: n, reply: reply}
}

// see waits for the first want and types nothing.
func see(want string) tmuxTurn { return tmuxTurn{want: want, only: true} }

// dialog runs turns in order.
func (s *tmuxSession) dialog(turns ...tmuxTurn) {
	s.t.Helper()
	for _, tr := range turns {
		s.waitFor(tr.want, tr.n)
		if !tr.only {
			s.send(tr.reply)
		}
	}
}

// exited waits for the command to end and returns the screen; it fails the
// test unless the command exited 0.
func (s *tmuxSession) exited() string {
	s.t.Helper()
	scr := s.waitFor("INIT-EXIT=", 0)
	if !strings.Contains(scr, "INIT-EXIT=0") {
		s.t.Fatalf("init failed:\n%s", scr)
	}
	return scr
}

// startInit runs clawhost init with the env's arguments and extra in a
// terminal of its own.
func (e *initEnv) startInit(t *testing.T, extra ...string) *tmuxSession {
	t.Helper()
	return startTmux(t, e.environ(), append([]string{filepath.Join(binDir(t), "clawhost"), "init"}, append(e.initArgs(t), extra...)...))
}

// The whole first run in a real terminal: init's prompts answered with
// keystrokes (a wrong token first), the token checked with the fake
// Telegram and hidden while typed, the files written outside the checkout;
// then clawhost run, /owner CODE and an answer.
func TestInitInTerminal(t *testing.T) {
	e := newInitEnv(t)
	// The Anthropic API takes the key the user's shell has (test) and the bot's
	// (sk-good), and refuses any other.
	e.api.SetResponder(func(r *anthropictest.Request) anthropictest.Reply {
		if k := r.Header.Get("x-api-key"); k != "test" && k != "sk-good" {
			return anthropictest.Unauthorized()
		}
		return anthropictest.Reply{} // echo
	})
	term := e.startInit(t)
	term.dialog(
		ask("Channels to set up", "telegram"),
		ask("Telegram bot token (hidden)", "424242:WRONG"),
		see("does not know this token"),
		askAgain("Telegram bot token (hidden)", 1, initTGToken),
		see("✓ Telegram: the bot @clawbot"),
		ask("Workspace of the agent", ""),
		see("How will the bot reach Claude?"),
		ask("Choose 1, 2 or 3", "1"),
		ask("Anthropic API key (hidden)", "sk-wrong"),
		see("✗ Claude refused"),
		askAgain("Anthropic API key (hidden)", 1, "sk-good"),
		see("✓ Claude answers the bot"),
	)
	scr := term.exited()
	if i, j := strings.LastIndex(scr, "✓ Claude answers the bot"), strings.Index(scr, "Start clawhost now"); i < 0 || j < i {
		t.Errorf("init did not check claude again before saying start:\n%s", scr)
	}
	if strings.Contains(scr, "sk-good") || strings.Contains(scr, "sk-wrong") {
		t.Errorf("an API key was echoed:\n%s", scr)
	}
	if b, _ := os.ReadFile(filepath.Join(e.home, ".config", "clawhost", "clawhost.env")); !strings.Contains(string(b), `ANTHROPIC_API_KEY="sk-good"`) {
		t.Errorf("clawhost.env lacks the key:\n%s", b)
	}
	if strings.Contains(scr, initTGToken) || strings.Contains(scr, "424242:WRONG") {
		t.Errorf("a token was echoed:\n%s", scr)
	}
	m := ownerCodeRE.FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("no owner code on the screen:\n%s", scr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "clawhost-workspace")); err != nil {
		t.Errorf("the default workspace was not created: %v", err)
	}
	e.checkWritten(t)
	e.runAndClaim(t, m[1])
}

// WhatsApp chosen in init's terminal: init runs the whatsapp plugin against
// the fake WhatsApp and draws its QR code; the fake phone scans the code
// read back from the screen; init says it is linked and writes the
// configuration. Then clawhost run connects as that device without a
// second QR code: a contact claims the bot with /owner CODE and is answered.
func TestInitWhatsAppInTerminal(t *testing.T) { initWhatsAppInTerminal(t, false) }

// WhatsApp on the operator's own number: init asks, the answer "y" makes the bot answer
// only in "Message yourself". After clawhost run a contact's message gets nothing (no
// pairing code from the operator's number), "/owner CODE" in the self chat makes the
// owner and a note to self is answered there.
func TestInitWhatsAppPersonalInTerminal(t *testing.T) { initWhatsAppInTerminal(t, true) }

func initWhatsAppInTerminal(t *testing.T, personal bool) {
	e := newInitEnv(t)
	srv, err := whatsapptest.New(whatsapptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	term := e.startInit(t, "-whatsapp-server", srv.Addr(), "-whatsapp-root-key", srv.RootKeyHex())
	own := "n"
	if personal {
		own = "y"
	}
	term.dialog(
		ask("Channels to set up", "whatsapp"),
		ask("is this number your own personal one?", own),
		ask("Workspace of the agent", ""),
		ask("Choose 1, 2 or 3", "3"),
	)
	scr := term.waitFor(setup.QRHeader, 0)
	scr = term.waitFor("waiting for the phone", 0) // the whole code is drawn
	qr := terminalQRTextAfter(t, scr, setup.QRHeader+"\n", setup.QRIndent)
	if qr == "" {
		t.Fatalf("no QR code decoded from the terminal:\n%s", scr)
	}
	if err := srv.PairQR(waCtx(t), qr); err != nil {
		t.Fatalf("the phone scans the terminal's QR code: %v\n%s", err, scr)
	}
	term.waitFor("✓ WhatsApp: linked", 0)
	scr = term.exited()
	if strings.Contains(scr, "WhatsApp links at that first run") {
		t.Errorf("init, having linked, still says WhatsApp links at the first run:\n%s", scr)
	}
	m := ownerCodeRE.FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("no owner code on the screen:\n%s", scr)
	}
	cfg, err := os.ReadFile(filepath.Join(e.home, ".config", "clawhost", "config.hcl"))
	if err != nil || !strings.Contains(string(cfg), `plugin "wa"`) || !strings.Contains(string(cfg), srv.Addr()) {
		t.Fatalf("config.hcl: %v\n%s", err, cfg)
	}
	store := filepath.Join(e.home, ".local", "state", "clawhost", "plugins", setup.WhatsAppInstance, "whatsapp.db")
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("the linked device is not where clawhost run looks: %v", err)
	}

	cmd := exec.Command(filepath.Join(binDir(t), "clawhost"), "run")
	cmd.Dir, cmd.Env = t.TempDir(), e.environ()
	log := Run(t, cmd)
	ann, err := srv.AddContact(waAnn)
	if err != nil {
		t.Fatal(err)
	}
	if personal {
		if !strings.Contains(scr, `"Message yourself" chat`) || !strings.Contains(string(cfg), "only_self_chat = true") {
			t.Fatalf("init did not set up the personal number:\n%s\n%s", scr, cfg)
		}
		if _, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "are we still on for dinner?"}); err != nil {
			t.Fatal(err)
		}
		me := []types.JID{srv.JID(), srv.LID()}
		if _, err := srv.PhoneSendText(waCtx(t), srv.JID(), whatsapptest.TextOptions{Text: "/owner " + m[1]}); err != nil {
			t.Fatal(err)
		}
		waWaitText(t, srv, me, "You are the owner")
		if _, err := srv.PhoneSendText(waCtx(t), srv.JID(), whatsapptest.TextOptions{Text: "note to self wa-init-marker"}); err != nil {
			t.Fatal(err)
		}
		waWaitText(t, srv, me, "echo:", "wa-init-marker")
		for _, s := range srv.Sent() {
			if u := s.To.ToNonAD().User; u == ann.JID().User || u == ann.LID().User {
				t.Errorf("the bot wrote to a contact of the personal number: %q", s.Text())
			}
		}
		return
	}
	// A message sent before the host is connected waits at the fake; the
	// first answer proves clawhost run logged in as the linked device.
	if _, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "/owner " + m[1]}); err != nil {
		t.Fatal(err)
	}
	waWaitText(t, srv, waChat(ann), "You are the owner")
	if _, err := ann.SendText(waCtx(t), whatsapptest.TextOptions{Text: "hello from wa-init-marker"}); err != nil {
		t.Fatal(err)
	}
	waWaitText(t, srv, waChat(ann), "echo:", "wa-init-marker")
	if strings.Contains(log.String(), "scan this QR code") {
		t.Errorf("clawhost run asked for a QR code again:\n%s", log.String())
	}
}

// A Claude subscription in init's terminal: init runs claude setup-token (claude stubbed
// at the CLI boundary: a script that prints a token as claude does, and runs the real CLI
// for anything else), takes the token it printed, checks it with one real request and
// writes it to clawhost.env only.
func TestInitSubscriptionInTerminal(t *testing.T) {
	e := newInitEnv(t)
	const token = "sk-ant-oat01-INITSUBSCRIPTIONTOKEN0123456789abcdef"
	stub := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\nif [ \"$1\" = setup-token ]; then\n  echo 'Open this link to log in: https://claude.ai/oauth/authorize?code=true'\n" +
		"  echo 'Your OAuth token (valid for one year):'\n  echo '" + token + "'\n  exit 0\nfi\nexec '" + e.claude + "' \"$@\"\n"
	sdktest.WriteExecutable(t, stub, []byte(script), 0o755)
	term := e.startInit(t, "-claude", stub)
	term.dialog(
		ask("Channels to set up", "telegram"),
		ask("Telegram bot token (hidden)", initTGToken),
		ask("Workspace of the agent", ""),
		ask("Choose 1, 2 or 3", "2"),
		see("Running claude setup-token"),
		see("✓ Claude answers the bot"),
	)
	term.exited()
	env, _ := os.ReadFile(filepath.Join(e.home, ".config", "clawhost", "clawhost.env"))
	cfg, _ := os.ReadFile(filepath.Join(e.home, ".config", "clawhost", "config.hcl"))
	if !strings.Contains(string(env), `CLAUDE_CODE_OAUTH_TOKEN="`+token+`"`) || strings.Contains(string(cfg), token) {
		t.Errorf("clawhost.env:\n%s\nconfig.hcl:\n%s", env, cfg)
	}
	var bearer bool
	for _, r := range e.api.Requests() {
		bearer = bearer || r.Header.Get("Authorization") == "Bearer "+token
	}
	if !bearer {
		t.Error("the check did not reach the API with the subscription token")
	}
}
