package setup

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// ClaudeAuth is how the bot reaches Claude, as init asks it.
type ClaudeAuth string

const (
	// AuthAPIKey: an Anthropic API key, written to clawhost.env as ANTHROPIC_API_KEY.
	AuthAPIKey ClaudeAuth = "api-key"
	// AuthSubscription: a Claude subscription: `claude setup-token` makes a long-lived
	// token, written to clawhost.env as CLAUDE_CODE_OAUTH_TOKEN.
	AuthSubscription ClaudeAuth = "subscription"
	// AuthLater: nothing now; clawhost doctor says what is missing.
	AuthLater ClaudeAuth = "later"
)

// The environment variables init writes claude's credential to; the host reads
// clawhost.env at start, and the runner passes both to claude.
const (
	EnvAPIKey     = "ANTHROPIC_API_KEY"
	EnvOAuthToken = "CLAUDE_CODE_OAUTH_TOKEN"
)

// ClaudeAnswer is what one minimal real request through the claude CLI found.
type ClaudeAnswer struct {
	// OK: the API answered.
	OK bool
	// Refused: the API refused the credential, or claude has none.
	Refused bool
	// Message is claude's own words when not OK.
	Message string
}

// ClaudeCheck makes one minimal real request with the claude CLI at claude, claude's
// config directory configDir and env over the environment a turn gets (core/cli: the
// runner's Config.Ask). err: claude could not run.
type ClaudeCheck func(ctx context.Context, claude, configDir string, env map[string]string) (ClaudeAnswer, error)

// ClaudeCommand runs the claude CLI in the user's terminal (its input and errors the
// terminal's) with args and the bot's config directory, copying what it prints to out
// and returning it too.
type ClaudeCommand func(ctx context.Context, claude, configDir string, out io.Writer, args ...string) (string, error)

// oauthTokenRE finds the token `claude setup-token` prints.
var oauthTokenRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`sk-ant-oat[0-9]*-[A-Za-z0-9_-]{20,}`) })

// botConfigDir is the claude config directory of the bot init sets up (the host's
// <data_dir>/claude).
func botConfigDir(p Plan) string { return filepath.Join(p.DataDir, "claude") }

// claudeEnv is the credential of p for claude's environment.
func claudeEnv(p Plan) map[string]string {
	env := map[string]string{}
	if p.AnthropicKey != "" {
		env[EnvAPIKey] = p.AnthropicKey
	}
	if p.ClaudeToken != "" {
		env[EnvOAuthToken] = p.ClaudeToken
		if p.AnthropicKey == "" {
			env[EnvAPIKey] = "" // a key in the shell's environment would be used instead
		}
	}
	return env
}

// claudeAuth asks how the bot reaches Claude and gets the credential: an API key
// checked with one real request (asked again when the API refuses it), or a
// subscription token from claude's own `claude setup-token` in this terminal.
func (s *session) claudeAuth(ctx context.Context, p *Plan) error {
	if p.AnthropicKey != "" || p.ClaudeToken != "" {
		return s.checkCredential(ctx, *p)
	}
	if !s.o.Interactive {
		return nil
	}
	s.say("\nHow will the bot reach Claude? (It logs in on its own, not with your terminal's login.)\n" +
		"  1) an Anthropic API key (console.anthropic.com → API keys): pay per use\n" +
		"  2) your Claude subscription (Pro, Max): claude setup-token makes a long-lived token for the bot\n" +
		"  3) later: clawhost doctor says what is missing\n")
	for {
		ans, err := s.ask("Choose 1, 2 or 3", "1")
		if err != nil {
			return err
		}
		switch strings.TrimSpace(ans) {
		case "1", "key", "api", "api-key":
			p.ClaudeAuth = AuthAPIKey
			return s.apiKey(ctx, p)
		case "2", "subscription":
			p.ClaudeAuth = AuthSubscription
			return s.subscription(ctx, p)
		case "3", "later":
			p.ClaudeAuth = AuthLater
			return nil
		}
	}
}

// apiKey asks for an API key until the API answers with it (or cannot be asked).
func (s *session) apiKey(ctx context.Context, p *Plan) error {
	for {
		key, err := s.secret("Anthropic API key")
		if err != nil {
			return err
		}
		if key == "" {
			continue
		}
		p.AnthropicKey = key
		if err := s.checkCredential(ctx, *p); err == nil || !errors.Is(err, errRefused) {
			return nil
		}
		s.say("Paste it again.\n")
		p.AnthropicKey = ""
	}
}

// subscription runs `claude setup-token` in the terminal (claude's own login flow: a
// link to open, a code to paste back) and takes the token it prints; when none is seen
// it asks for it.
func (s *session) subscription(ctx context.Context, p *Plan) error {
	if s.o.RunClaude == nil {
		return errors.New("init: cannot run claude setup-token here; choose an API key, or later")
	}
	s.say("\nRunning claude setup-token: claude shows a link to log in with your Claude account and prints a\n" +
		"token for the bot (it is written to clawhost.env, never to config.hcl).\n\n")
	var out bytes.Buffer
	printed, err := s.o.RunClaude(ctx, p.Claude, botConfigDir(*p), &out, "setup-token")
	if err != nil {
		s.say("! claude setup-token: %v\n", err)
	}
	tok := oauthTokenRE().FindString(printed)
	for tok == "" {
		if tok, err = s.secret("The token claude printed (sk-ant-oat…)"); err != nil {
			return err
		}
		tok = strings.TrimSpace(tok)
	}
	p.ClaudeToken = tok
	if err := s.checkCredential(ctx, *p); errors.Is(err, errRefused) {
		s.say("The bot's credential is written anyway; fix it in %s and run clawhost doctor.\n", FilesOf(p.ConfigDir).Env)
	}
	return nil
}

// errRefused is a credential the API refused.
var errRefused = errors.New("refused")

// checkCredential makes one minimal real request with p's credential and says what came
// of it; it returns errRefused when the API refused it, nil otherwise (an API that could
// not be asked is said, not an error: the network may come later).
func (s *session) checkCredential(ctx context.Context, p Plan) error {
	if s.o.CheckClaude == nil {
		return nil
	}
	a, err := s.o.CheckClaude(ctx, p.Claude, botConfigDir(p), claudeEnv(p))
	switch {
	case err != nil:
		s.say("! Could not ask Claude through claude: %v (clawhost doctor checks it again).\n", err)
	case a.OK:
		s.say("✓ Claude answers the bot (one minimal request).\n")
	case a.Refused:
		s.say("✗ Claude refused: %s\n", a.Message)
		return errRefused
	default:
		s.say("! Claude did not answer: %s (clawhost doctor checks it again).\n", a.Message)
	}
	return nil
}

// sayClaudeReady is init's last check before it says start: one real request with what
// was written, and what to do when it fails.
func (s *session) sayClaudeReady(ctx context.Context, p Plan) {
	if s.o.CheckClaude == nil {
		return
	}
	s.say("\nChecking that the bot's claude answers…\n")
	if err := s.checkCredential(ctx, p); errors.Is(err, errRefused) || (p.AnthropicKey == "" && p.ClaudeToken == "" && p.ClaudeAuth == AuthLater) {
		s.say("Before the bot can answer, give it a credential: put %s=… (an API key) or %s=… (claude\n"+
			"setup-token) in %s, or run clawhost init again. clawhost doctor checks it.\n", EnvAPIKey, EnvOAuthToken, FilesOf(p.ConfigDir).Env)
	}
}
