package telegramtest

import (
	"encoding/json"
	"net/url"
	"strings"
)

// BotCommand is one entry of setMyCommands.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// Commands is the last list set with setMyCommands.
func (s *Server) Commands() []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BotCommand(nil), s.commands...)
}

func (s *Server) setMyCommands(p url.Values) (any, *apiError) {
	var cmds []BotCommand
	if err := json.Unmarshal([]byte(p.Get("commands")), &cmds); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	if len(cmds) > 100 {
		return nil, badRequest("too many commands specified")
	}
	for _, c := range cmds {
		if !validCommand(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := UTF16Len(strings.TrimSpace(c.Description)); n == 0 || n > 256 {
			return nil, badRequest("command description is empty")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = cmds
	return true, nil
}

func validCommand(c string) bool {
	if c == "" || len(c) > 32 {
		return false
	}
	for _, r := range c {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}
