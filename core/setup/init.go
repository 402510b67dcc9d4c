package setup

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/clawhost/clawhost/core/internal/installpath"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/internal/bubblewrap"
	"github.com/clawhost/clawhost/core/ownerclaim"
	"github.com/clawhost/clawhost/sdk/schema"
)

// Options are an init's inputs: the answers given by flags (Plan), how to
// ask for the rest, and the outside world.
type Options struct {
	// Plan holds what flags said; the empty fields are asked for
	// (Interactive) or defaulted.
	Plan Plan
	// Interactive asks on In/Out; otherwise nothing is asked, a bad token
	// is an error and existing files are kept unless Force.
	Interactive bool
	// Force replaces existing files without asking.
	Force bool
	In    io.Reader
	Out   io.Writer
	// HideInput turns the terminal's echo off while a token is read and
	// returns what turns it on again; nil: tokens are read like any line.
	HideInput func() (restore func(), err error)
	Getenv    Getenv
	Now       func() time.Time
	// LinkWhatsApp links WhatsApp before init ends, when it is set up:
	// RunPlugin runs its plugin, the QR codes are drawn on Out, and init
	// waits up to LinkTimeout (0: DefaultLinkTimeout) for a phone to scan
	// one. Otherwise the device is linked at the first clawhost run.
	// Linked, when set, is asked first: an already linked device is not
	// linked again.
	LinkWhatsApp bool
	RunPlugin    PluginRunner
	Linked       LinkedCheck
	// Probe checks a token with its plugin's live checks before it is
	// written; nil: tokens are written unchecked.
	Probe Prober
	// Catalog lists the channel plugins of the plugin directory: init
	// offers those and no other (its own channels among them with their
	// own questions, the rest set up from their schemas: OtherChannel).
	// Nil, or a catalog that fails: init's own channels.
	Catalog     Catalog
	LinkTimeout time.Duration
	// LookPath finds a program in PATH (nil: exec.LookPath): init says
	// how to install bubblewrap when it finds no bwrap.
	LookPath func(string) (string, error)
	// CheckClaude makes one minimal real request through the claude CLI: an API key is
	// checked with it, and init ends with it (doctor's check). Nil: nothing is checked.
	CheckClaude ClaudeCheck
	// RunClaude runs claude in the terminal (claude setup-token, for a subscription).
	RunClaude ClaudeCommand
	// Listen opens a listener (nil: net.Listen): init checks with it that
	// the status page's and the web chat's addresses are free.
	Listen func(network, addr string) (net.Listener, error)
}

// channelNames are the channels init knows by name (its own questions),
// as typed at its prompt, in the order it offers them.
var channelNames = []string{"telegram", "discord", "whatsapp", "webchat"}

// Result is what init wrote.
type Result struct {
	Files     Files
	Plan      Plan
	OwnerCode string
	// WhatsAppLinked reports whether init linked WhatsApp.
	WhatsAppLinked bool
}

// session is one run of init.
type session struct {
	o  Options
	in *bufio.Reader
	// schemas are the config schemas of the other channel plugins offered
	// (others), by source.
	schemas map[string]schema.Schema
	// setups are their setup texts (CatalogEntry.Setup), by source.
	setups map[string]string
	// own are init's own channels offered: those the catalog lists
	// (all of channelNames without a catalog).
	own []string
}

// Run is clawhost init: it completes o.Plan (asking, or from defaults),
// checks each token with its platform, writes the files and an owner code,
// and tells the user what to do next.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &session{o: o, in: bufio.NewReader(o.In)}
	p, err := s.complete(ctx)
	if err != nil {
		return Result{}, err
	}
	overwrite := func(string) bool { return o.Force }
	if o.Interactive && !o.Force {
		overwrite = func(path string) bool {
			ans, err := s.ask(fmt.Sprintf("%s exists. Replace it? [y/N]", path), "n")
			return err == nil && strings.HasPrefix(strings.ToLower(ans), "y")
		}
	}
	if p.WebChat && p.WebChatToken == "" {
		if p.WebChatToken, err = randomToken(); err != nil {
			return Result{}, fmt.Errorf("init: %w", err)
		}
	}
	files, err := Write(p, o.Now(), overwrite)
	if err != nil {
		return Result{}, fmt.Errorf("init: %w", err)
	}
	code, err := ownerclaim.Create(p.DataDir, ownerclaim.DefaultTTL, o.Now())
	if err != nil {
		return Result{}, fmt.Errorf("init: %w", err)
	}
	s.say("\nWrote %s\n  and %s (the tokens, 0600).\n", files.Config, files.Env)
	linked := false
	if p.WhatsApp && o.LinkWhatsApp && o.RunPlugin != nil {
		switch err := s.linkWhatsApp(ctx, files); {
		case errors.Is(err, errLinkLater):
		case err != nil:
			return Result{Files: files, Plan: p}, fmt.Errorf("init: whatsapp: %w (the configuration is written: clawhost run shows a new QR code, as clawhost status and the status page do)", err)
		default:
			linked = true
		}
	}
	s.startOthers(ctx, p, files)
	s.sayClaudeReady(ctx, p)
	if p.WhatsAppPersonal {
		s.say("\nYou become the owner by writing, within 24 hours, in WhatsApp's \"Message yourself\" chat:\n\n    /owner %s\n\n", code)
	} else {
		s.say("\nYou become the owner by sending your bot, within 24 hours:\n\n    /owner %s\n\n", code)
	}
	s.sayBubblewrap(p)
	s.say("Start clawhost now:\n\n    clawhost run\n")
	if p.WhatsApp && !linked {
		s.say("\nWhatsApp links at that first run: clawhost run prints a QR code (also on clawhost status\nand the status page at http://%s/) to scan in WhatsApp → Settings → Linked devices.\n", p.AdminListen)
	}
	if p.WebChat {
		s.say("\nThe web chat, once clawhost runs (the link holds its access token: keep it to yourself):\n\n    http://%s/?token=%s\n", p.WebChatListen, p.WebChatToken)
	}
	return Result{Files: files, Plan: p, OwnerCode: code, WhatsAppLinked: linked}, nil
}

// address is the address given (a flag), said when it is in use; else
// def when it is free, or the first free port of the next 20, said (init
// would otherwise write an address clawhost cannot listen on); def when
// none is.
func (s *session) address(given, def, what, flag string) string {
	listen := s.o.Listen
	if listen == nil {
		listen = net.Listen
	}
	free := func(addr string) bool {
		l, err := listen("tcp", addr)
		if err != nil {
			return false
		}
		l.Close()
		return true
	}
	if given != "" {
		if !free(given) {
			s.say("Note: %s is in use now; %s will not open there while it is (%s).\n", given, what, flag)
		}
		return given
	}
	host, port, err := net.SplitHostPort(def)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return def
	}
	for i := range 21 {
		addr := net.JoinHostPort(host, strconv.Itoa(n+i))
		if free(addr) {
			if i > 0 {
				s.say("Note: %s is in use (another clawhost?): %s will be at %s (%s chooses another).\n", def, what, addr, flag)
			}
			return addr
		}
	}
	s.say("Note: %s and the 20 ports after it are in use: %s will not open there (%s chooses another).\n", def, what, flag)
	return def
}

// sayBubblewrap tells how to install bubblewrap, claude's sandbox, when
// it is not in PATH: without it the host refuses to start while anyone
// besides the owners can reach the agent, which pairing on a chat
// platform allows (the web chat on loopback alone is the owner's).
func (s *session) sayBubblewrap(p Plan) {
	lookPath := s.o.LookPath
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if _, err := lookPath(bubblewrap.Command); err == nil {
		return
	}
	refused := p.TelegramToken != "" || p.DiscordToken != "" || p.WhatsApp || len(p.Others) > 0
	if cmd := bubblewrap.Install(); cmd != "" {
		s.say("claude runs in a sandbox, bubblewrap, which is not installed here. Install it first:\n\n    %s\n\n", cmd)
	} else {
		s.say("claude runs in a sandbox, bubblewrap, which exists on Linux only.\n")
	}
	if refused {
		s.say("Without it clawhost refuses to start while strangers can pair with the bot (dm_policy =\n\"pairing\"); writing sandbox = \"off\" in the agent block of %s accepts that risk.\nclawhost doctor checks it.\n\n", FilesOf(p.ConfigDir).Config)
	}
}

// complete fills in the plan: defaults, the channels and their checked
// tokens, the workspace.
func (s *session) complete(ctx context.Context) (Plan, error) {
	p, o := s.o.Plan, s.o
	p.ConfigDir = absOr(p.ConfigDir, ConfigDir(o.Getenv))
	p.DataDir = absOr(p.DataDir, DataDir(o.Getenv))
	p.TelegramAPI = cmp.Or(p.TelegramAPI, TelegramAPI)
	p.DiscordAPI = cmp.Or(p.DiscordAPI, DiscordAPI)
	p.WebChatListen = s.address(p.WebChatListen, "127.0.0.1:8790", "the web chat", "-webchat-listen")
	p.AdminListen = s.address(p.AdminListen, "127.0.0.1:8791", "the status page", "-admin-listen")
	if p.PluginDir == "" {
		// Where the host looks when plugin_dir is unset.
		if p.PluginDir = installpath.ExecutableDir(); p.PluginDir == "" {
			return p, errors.New("init: find the plugins beside clawhost: the system does not say where clawhost is")
		}
		// Through install.sh's link to the current release, so an
		// upgrade moves plugin_dir to the new release's plugins.
		p.PluginDir = installpath.Current(p.PluginDir)
	}
	if p.Claude == "" {
		p.Claude = findClaude(o.Getenv)
	}
	if !o.Interactive {
		if p.TelegramToken == "" {
			p.TelegramToken = o.Getenv("TELEGRAM_BOT_TOKEN")
		}
		if p.DiscordToken == "" {
			p.DiscordToken = o.Getenv("DISCORD_BOT_TOKEN")
		}
		if p.TelegramToken == "" && p.DiscordToken == "" && !p.WhatsApp && !p.WebChat {
			return p, errors.New("init: no channel: give -telegram-token, -discord-token (or TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN in the environment), -whatsapp or -webchat")
		}
		p.Workspace = absOr(p.Workspace, Workspace(o.Getenv))
		if err := s.checkGiven(ctx, &p); err != nil {
			return p, err
		}
		if err := s.claudeAuth(ctx, &p); errors.Is(err, errRefused) {
			return p, errors.New("init: the Anthropic API refused the key (-anthropic-key)")
		}
		return p, nil
	}
	s.say("clawhost init: a few questions, then your bot is ready. Ctrl-C leaves without writing anything.\n\n")
	others := s.others(ctx, p)
	chosen, err := s.channels(p, others)
	if err != nil {
		return p, err
	}
	p.Others = nil
	for _, c := range chosen {
		if slices.Contains(others, c) {
			oc, err := s.other(ctx, p, c)
			if err != nil {
				return p, err
			}
			p.Others = append(p.Others, oc)
		}
	}
	p.WhatsApp, p.WebChat = slices.Contains(chosen, "whatsapp"), slices.Contains(chosen, "webchat")
	if slices.Contains(chosen, "telegram") {
		if p.TelegramToken, err = s.telegram(ctx, p); err != nil {
			return p, err
		}
	} else {
		p.TelegramToken = ""
	}
	if slices.Contains(chosen, "discord") {
		if p.DiscordToken, err = s.discord(ctx, p); err != nil {
			return p, err
		}
	} else {
		p.DiscordToken = ""
	}
	if p.WhatsApp {
		ans, err := s.ask("\nWhatsApp: is this number your own personal one? (yes: the bot answers only in \"Message yourself\",\nnever to the people who write to you; y/n)", "n")
		if err != nil {
			return p, err
		}
		p.WhatsAppPersonal = strings.HasPrefix(strings.ToLower(ans), "y")
	}
	ws, err := s.ask("Workspace of the agent (its working directory; created)", absOr(p.Workspace, Workspace(o.Getenv)))
	if err != nil {
		return p, err
	}
	p.Workspace = absOr(expandHome(ws, o.Getenv), Workspace(o.Getenv))
	return p, s.claudeAuth(ctx, &p)
}

// checkGiven checks the tokens given by flags or the environment.
func (s *session) checkGiven(ctx context.Context, p *Plan) error {
	if p.TelegramToken != "" {
		if err := s.checkToken(ctx, *p, "telegram", "Telegram", telegramBlock(*p, p.TelegramToken)); err != nil {
			return fmt.Errorf("init: telegram token: %w", err)
		}
	}
	if p.DiscordToken != "" {
		if err := s.checkToken(ctx, *p, "discord", "Discord", discordBlock(*p, p.DiscordToken)); err != nil {
			return fmt.Errorf("init: discord token: %w", err)
		}
	}
	return nil
}

// channels asks which channels to set up among those offered: init's
// own that are installed (s.own), then others (the other channel plugins
// found, sorted).
func (s *session) channels(p Plan, others []string) ([]string, error) {
	names := append(slices.Clone(s.own), others...)
	if len(names) == 0 {
		return nil, fmt.Errorf("init: no channel plugin in %s: install clawhost's plugins there (install.sh, or make build), or name their directory with -plugin-dir", p.PluginDir)
	}
	list := strings.Join(names, ", ")
	def := []string{}
	if p.TelegramToken != "" || p.DiscordToken == "" && !p.WhatsApp {
		def = append(def, "telegram")
	}
	if p.DiscordToken != "" {
		def = append(def, "discord")
	}
	if p.WhatsApp {
		def = append(def, "whatsapp")
	}
	def = append(def, "webchat")
	def = slices.DeleteFunc(def, func(c string) bool { return !slices.Contains(names, c) })
	if len(def) == 0 {
		def = names[:1]
	}
	for {
		ans, err := s.ask("Channels to set up, comma-separated: "+list, strings.Join(def, ","))
		if err != nil {
			return nil, err
		}
		var out []string
		bad := ""
		for _, c := range strings.FieldsFunc(strings.ToLower(ans), func(r rune) bool { return r == ',' || r == ' ' }) {
			c = strings.ReplaceAll(c, "web-chat", "webchat")
			if !slices.Contains(names, c) {
				bad = c
				break
			}
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
		switch {
		case bad != "":
			s.say("%q is not one of %s.\n", bad, list)
		case len(out) == 0:
			s.say("Pick at least one.\n")
		default:
			return out, nil
		}
	}
}

// telegram asks for a bot token until Telegram accepts one (the telegram
// plugin's probe).
func (s *session) telegram(ctx context.Context, p Plan) (string, error) {
	tok := p.TelegramToken
	if tok == "" {
		s.say("\nTelegram: create a bot with @BotFather (/newbot) and paste its token.\n")
	}
	for {
		if tok == "" {
			var err error
			if tok, err = s.secret("Telegram bot token"); err != nil {
				return "", err
			}
			if tok == "" {
				continue
			}
		}
		err := s.checkToken(ctx, p, "telegram", "Telegram", telegramBlock(p, tok))
		switch {
		case err == nil:
			return tok, nil
		case errors.Is(err, ErrBadToken):
			s.say("✗ Telegram does not know this token (check you pasted all of it: 123456:ABC…). Paste it again.\n")
		default:
			s.say("✗ Could not ask Telegram: %v. Paste the token again to retry.\n", err)
		}
		tok = ""
	}
}

// discord asks for a bot token until Discord accepts one.
func (s *session) discord(ctx context.Context, p Plan) (string, error) {
	tok := p.DiscordToken
	if tok == "" {
		s.say("\nDiscord: in the developer portal (discord.com/developers), your application → Bot → Reset Token, and paste it.\n")
	}
	for {
		if tok == "" {
			var err error
			if tok, err = s.secret("Discord bot token"); err != nil {
				return "", err
			}
			if tok == "" {
				continue
			}
		}
		err := s.checkToken(ctx, p, "discord", "Discord", discordBlock(p, tok))
		switch {
		case err == nil:
			return tok, nil
		case errors.Is(err, ErrBadToken):
			s.say("✗ Discord refused this token. Paste it again.\n")
		default:
			s.say("✗ Could not ask Discord: %v. Paste the token again to retry.\n", err)
		}
		tok = ""
	}
}

// telegramBlock and discordBlock are the config blocks init writes for a
// token (write.go), as the plugin's probe reads them.
func telegramBlock(p Plan, token string) map[string]any {
	return map[string]any{"token": token, "api_endpoint": p.TelegramAPI}
}

func discordBlock(p Plan, token string) map[string]any {
	return map[string]any{"token": token, "api_endpoint": p.DiscordAPI}
}

func (s *session) say(format string, args ...any) { fmt.Fprintf(s.o.Out, format, args...) }

// ask prints a prompt with its default and reads a line; an empty answer
// is the default. The end of input is an error: nothing is written.
func (s *session) ask(prompt, def string) (string, error) {
	if def != "" {
		s.say("%s [%s]: ", prompt, def)
	} else {
		s.say("%s: ", prompt)
	}
	line, err := s.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", fmt.Errorf("init: read the answer: %w", err)
	}
	if line = strings.TrimSpace(line); line == "" {
		return def, nil
	}
	return line, nil
}

// secret reads a token without echoing it where it can.
func (s *session) secret(prompt string) (string, error) {
	if s.o.HideInput == nil {
		return s.ask(prompt, "")
	}
	restore, err := s.o.HideInput()
	if err != nil {
		return s.ask(prompt, "")
	}
	v, err := s.ask(prompt+" (hidden)", "")
	restore()
	s.say("\n")
	return v, err
}

// findClaude is the claude CLI for the configuration, found as the host
// finds it (PATH, then claude's install places: installpath), else
// "claude" (the host looks for it again at start).
func findClaude(getenv Getenv) string {
	m := installpath.System() // the host's own lookup, on init's environment
	m.LookupEnv = func(k string) (string, bool) { v := getenv(k); return v, v != "" }
	if f, err := m.Find(installpath.Claude); err == nil {
		return f.Path
	}
	return installpath.Claude
}

// absOr is p made absolute, or def when p is empty.
func absOr(p, def string) string {
	if p == "" {
		return def
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func expandHome(p string, getenv Getenv) string {
	if p == "~" {
		return home(getenv)
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home(getenv), rest)
	}
	return p
}

// randomToken is a new 32-hex-digit secret.
func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
