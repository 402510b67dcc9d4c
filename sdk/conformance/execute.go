package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

// knownMedia are the media kinds a reply's file may name (or none: the
// host infers it from the file name).
var knownMedia = []channel.MediaKind{"", channel.MediaImage, channel.MediaAudio, channel.MediaVoice, channel.MediaVideo, channel.MediaDocument, channel.MediaSticker}

// checkExecute runs Target.Exec ("/name args") through the plugin's
// Execute, as the host would for a direct message of an owner, and checks
// the answer: the command is listed (by name or alias); the plugin
// answers with at least one reply, or refuses the input with
// channel.CodeInvalidRequest and a message (shown to the user as is); each
// reply has text or a file, text in valid UTF-8, a Format the host knows
// ("", plain, markdown), files that are absolute paths to regular files of
// a known kind, and buttons a channel can carry.
func checkExecute(ctx context.Context, tg Target) (string, error) {
	if tg.Exec == "" {
		return "", fmt.Errorf("%w: no command to run (clawhost plugin test -exec \"/cmd args\")", ErrSkipped)
	}
	word, args, _ := strings.Cut(strings.TrimSpace(tg.Exec), " ")
	name, ok := strings.CutPrefix(word, "/")
	if !ok || name == "" {
		return "", fmt.Errorf("execute: %q is not a command: want \"/name args\"", tg.Exec)
	}
	inst, specs, done, err := tg.commands(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, tg.timeout())
	defer cancel()
	spec, ok := findCommand(specs, strings.ToLower(name))
	if !ok {
		return "", fmt.Errorf("execute: the plugin lists no /%s", name)
	}
	req := command.Request{Command: spec, Args: strings.TrimSpace(args), RawText: tg.Exec, SenderIsOwner: true,
		Conversation: command.Conversation{SessionKey: "conformance:direct:1", Instance: "conformance", Channel: "conformance", ChatType: channel.ChatDirect, ChatID: "1"},
		Sender:       channel.Sender{ID: "1", Name: "Conformance"}, Workdir: tg.Workdir}
	res, err := inst.Plugin.Execute(ctx, req)
	var ce *channel.Error
	switch {
	case errors.As(err, &ce) && ce.Code == channel.CodeInvalidRequest && ce.Message != "":
		return fmt.Sprintf("/%s refused the input: %q (the user sees it)", spec, ce.Message), nil
	case err != nil:
		return "", fmt.Errorf("execute /%s: %w (the user would see only that the command failed)", spec, err)
	}
	return replyProblems("/"+spec, res.Replies)
}

// findCommand returns the Spec.Name that name (a name or an alias) stands
// for.
func findCommand(specs []command.Spec, name string) (string, bool) {
	for _, s := range specs {
		if s.Name == name || slices.Contains(s.Aliases, name) {
			return s.Name, true
		}
	}
	return "", false
}

// replyProblems checks the replies of cmd (see checkExecute) and
// summarises them.
func replyProblems(cmd string, replies []command.Reply) (string, error) {
	var p problems
	if len(replies) == 0 {
		p.addf("execute %s: no reply (the user sees nothing)", cmd)
	}
	var kinds []string
	for i, r := range replies {
		what := fmt.Sprintf("execute %s: reply %d", cmd, i+1)
		if strings.TrimSpace(r.Text) == "" && len(r.Media) == 0 {
			p.addf("%s has neither text nor a file (the host drops it)", what)
		}
		if !utf8.ValidString(r.Text) {
			p.addf("%s: text is not valid UTF-8", what)
		}
		switch r.Format {
		case "", channel.FormatPlain, channel.FormatMarkdown:
		default:
			p.addf("%s: format %q: want %q or %q", what, r.Format, channel.FormatPlain, channel.FormatMarkdown)
		}
		for _, m := range r.Media {
			p.add(mediaProblem(what, m))
		}
		p.add(buttonProblem(what, r.Buttons))
		kind := string(r.Format)
		if kind == "" {
			kind = string(channel.FormatPlain)
		}
		if n := len(r.Media); n > 0 {
			kind += fmt.Sprintf(" +%d file", n)
		}
		kinds = append(kinds, kind)
	}
	return fmt.Sprintf("%s: %d replies (%s)", cmd, len(replies), strings.Join(kinds, ", ")), p.err()
}

// mediaProblem checks one file of a reply.
func mediaProblem(what string, m channel.OutboundMedia) error {
	if !slices.Contains(knownMedia, m.Kind) {
		return fmt.Errorf("%s: file %s: unknown kind %q", what, filepath.Base(m.Path), m.Kind)
	}
	if !filepath.IsAbs(m.Path) {
		return fmt.Errorf("%s: file %q: want an absolute path", what, m.Path)
	}
	fi, err := os.Stat(m.Path)
	if err != nil {
		return fmt.Errorf("%s: file: %w", what, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: file %s is not a regular file", what, m.Path)
	}
	return nil
}

// buttonProblem checks a reply's buttons: an id of 1 to MaxButtonID bytes
// and a label each, at most 5 a row and 10 rows (the host drops others).
func buttonProblem(what string, rows [][]channel.Button) error {
	var p problems
	if len(rows) > 10 {
		p.addf("%s: %d rows of buttons, at most 10 are shown", what, len(rows))
	}
	for _, row := range rows {
		if len(row) > 5 {
			p.addf("%s: a row of %d buttons, at most 5 are shown", what, len(row))
		}
		for _, b := range row {
			if b.ID == "" || len(b.ID) > channel.MaxButtonID || strings.TrimSpace(b.Label) == "" {
				p.addf("%s: button %q (%q): want an id of 1 to %d bytes and a label", what, b.Label, b.ID, channel.MaxButtonID)
			}
		}
	}
	return p.err()
}
