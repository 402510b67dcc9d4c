package voice

import (
	"context"
	"strings"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
)

var _ command.Handler = (*Plugin)(nil)

// Commands offers /voice.
func (p *Plugin) Commands() []command.Spec {
	return []command.Spec{{Name: "voice", Usage: "/voice [on|off|auto]",
		Description: "Voice replies in this chat: on, off, or auto (when you send a voice note)"}}
}

// Execute shows or sets the chat's voice reply mode.
func (p *Plugin) Execute(_ context.Context, req command.Request) (command.Response, error) {
	c, _, st := p.parts()
	if c == nil {
		return command.Response{}, channel.Errorf(channel.CodeUnavailable, "the voice plugin is not configured")
	}
	key := req.Conversation.SessionKey
	arg := strings.ToLower(strings.TrimSpace(req.Args))
	buttons := [][]channel.Button{{{Label: "On", ID: "/voice on"}, {Label: "Auto", ID: "/voice auto"}, {Label: "Off", ID: "/voice off"}}}
	if arg == "" || arg == "status" {
		m := st.get(key).Mode
		if m == "" {
			m = c.defaultMode
		}
		return reply(describe(m)+"\n"+engines(c), buttons), nil
	}
	m, ok := parseMode(arg)
	if !ok {
		return reply("Usage: /voice on | off | auto", buttons), nil
	}
	err := st.update(key, func(x *chat) {
		x.Mode = m
		if m == c.defaultMode {
			x.Mode = ""
		}
	})
	if err != nil {
		return command.Response{}, channel.Errorf(channel.CodeUnavailable, "the setting was not saved")
	}
	text := describe(m)
	if c.tts == nil && m != ModeOff {
		text += "\n(No text-to-speech engine is configured: replies stay text.)"
	}
	return reply(text, nil), nil
}

func describe(m Mode) string {
	switch m {
	case ModeOn:
		return "Voice replies: on — every answer also comes as a voice note."
	case ModeAuto:
		return "Voice replies: auto — answers to your voice notes come as voice notes too."
	}
	return "Voice replies: off — answers are text."
}

func engines(c *config) string {
	if c.stt == nil {
		return "Voice notes are passed on as audio files (no speech-to-text engine configured)."
	}
	return "Voice notes are transcribed for the agent."
}

func reply(text string, buttons [][]channel.Button) command.Response {
	return command.Response{Replies: []command.Reply{{Text: text, Buttons: buttons}}}
}
