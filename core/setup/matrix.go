package setup

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/clawhost/clawhost/core/pluginhost"
)

// MatrixSource is the Matrix channel plugin's source. Init sets it up from
// its schema (OtherChannel) and then starts it once (startMatrix): the
// plugin logs in and gives its device the account's cross-signing
// identity, making it and its recovery key when the account has none.
const MatrixSource = "matrix"

// matrixStartTimeout bounds init's start of the Matrix plugin.
const matrixStartTimeout = 2 * time.Minute

// startMatrix runs the Matrix plugin instance of the configuration just
// written until it reports how its start went, and says it: ready (with
// where the recovery key is kept), or what to do. A start that fails
// leaves the configuration as written: clawhost run, clawhost status and
// the status page say the same.
func (s *session) startMatrix(ctx context.Context, files Files, oc OtherChannel) {
	ctx, cancel := context.WithTimeout(ctx, matrixStartTimeout)
	defer cancel()
	s.say("\n%s: logging in and setting up the bot device's cross-signing (its recovery key)…\n", oc.Source)
	var said bool
	err := s.o.RunPlugin(ctx, files.Config, oc.Source, func(st pluginhost.Status, _ func(context.Context) error) (bool, error) {
		msg := strings.TrimSuffix(st.Message, ".")
		switch {
		// Ready as soon as it serves; the plugin's own report (its
		// message) comes once it logged in.
		case st.State == pluginhost.StateReady && msg != "":
			s.say("✓ %s: %s.\n", oc.Source, msg)
			if oc.Values["recovery_key"] != "" {
				s.say("  The recovery key you gave is kept in %s (0600) as %s: keep a copy elsewhere too.\n", files.Env, EnvName(oc.Source, "recovery_key"))
			}
		case st.State == pluginhost.StateDegraded && msg != "":
			s.say("! %s: %s.\n", oc.Source, msg)
		case st.State == pluginhost.StateNeedsAttention:
			s.say("✗ %s: %s.\n", oc.Source, cmpOr(msg, "the plugin needs attention"))
		case st.State == pluginhost.StateMisconfigured || st.State == pluginhost.StateMissing:
			return false, errors.New(cmpOr(st.LastError, string(st.State)))
		default:
			return false, nil
		}
		said = true
		return true, nil
	})
	if err != nil && !said {
		s.say("! %s: the plugin did not report its start (%v); clawhost run sets up cross-signing and clawhost status says how it went.\n", oc.Source, err)
	}
}

// startOthers starts the other channels init starts once (Matrix).
func (s *session) startOthers(ctx context.Context, p Plan, files Files) {
	if s.o.RunPlugin == nil {
		return
	}
	for _, oc := range p.Others {
		if oc.Source == MatrixSource {
			s.startMatrix(ctx, files, oc)
		}
	}
}
