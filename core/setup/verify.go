package setup

import (
	"context"
	"errors"
	"fmt"

	"github.com/clawhost/clawhost/sdk/probe"
)

// Default platform endpoints, as the plugins' api_endpoint defaults: the
// config init writes leaves api_endpoint out when it is one of them.
const (
	TelegramAPI = "https://api.telegram.org/bot%s/%s"
	DiscordAPI  = "https://discord.com"
)

// ErrBadToken is a token the platform refused (the plugin's first live
// check failed): ask for it again.
var ErrBadToken = errors.New("the platform refused this token")

// Prober runs the live checks of the plugin of source, as installed in
// pluginDir (clawhost-<source>), on a config block given as its attributes
// (sdk.Plugin.Probe: the plugin asks its platform; clawhost init's cli
// runs it through the one plugin launcher). A plugin without live checks
// returns an empty report.
type Prober func(ctx context.Context, pluginDir, source string, block map[string]any) (probe.Report, error)

// checkToken has the plugin of source check a block with a token. The
// first check of the report is the token's: failed, it is ErrBadToken with
// what the plugin found; not ok otherwise (the platform could not be
// asked), an error saying why. The later checks are printed as advice,
// and who the bot is. A nil Prober checks nothing.
func (s *session) checkToken(ctx context.Context, p Plan, source, label string, block map[string]any) error {
	if s.o.Probe == nil {
		return nil
	}
	rep, err := s.o.Probe(ctx, p.PluginDir, source, block)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if len(rep.Checks) == 0 {
		return nil
	}
	first := rep.Checks[0]
	switch first.Verdict {
	case probe.Fail:
		return fmt.Errorf("%w: %s", ErrBadToken, first.Found)
	case probe.Warn:
		return errors.New(first.Found)
	}
	who := rep.Identity.Handle
	if who == "" {
		who = rep.Identity.Name
	}
	s.say("✓ %s: the bot %s (id %s).\n", label, who, rep.Identity.ID)
	for _, c := range rep.Checks[1:] {
		if c.Verdict != probe.OK {
			s.say("! %s: %s.\n  %s.\n", c.Name, c.Found, c.Do)
		}
	}
	if rep.Identity.Link != "" {
		s.say("  To reach or add the bot: %s\n", rep.Identity.Link)
	}
	return nil
}
