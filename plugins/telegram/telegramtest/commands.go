package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// BotCommand is one entry of setMyCommands.
type BotCommand struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// Commands is the last default menu set with setMyCommands (no scope, or
// the scope "default").
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
	key, aerr := scopeKey(p.Get("scope"))
	if aerr != nil {
		return nil, aerr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == "" {
		s.commands = cmds
		return true, nil
	}
	if s.scoped == nil {
		s.scoped = map[string][]BotCommand{}
	}
	s.scoped[key] = cmds
	return true, nil
}

// ChatCommands is the menu last set with the scope BotCommandScopeChat
// of chatID (nil: none).
func (s *Server) ChatCommands(chatID int64) []BotCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]BotCommand(nil), s.scoped[fmt.Sprintf("chat:%d", chatID)]...)
}

// scopeKey reads setMyCommands' scope as Telegram does: none or
// "default" is the default menu (""); "chat" needs a chat_id, kept as
// "chat:<id>"; the other scopes are kept by their type.
func scopeKey(raw string) (string, *apiError) {
	if raw == "" {
		return "", nil
	}
	var sc struct {
		Type   string          `json:"type"`
		ChatID json.RawMessage `json:"chat_id"`
	}
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return "", badRequest("can't parse BotCommandScope JSON object")
	}
	switch sc.Type {
	case "default":
		return "", nil
	case "all_private_chats", "all_group_chats", "all_chat_administrators":
		return sc.Type, nil
	case "chat":
		var id int64
		if err := json.Unmarshal(sc.ChatID, &id); err != nil {
			return "", badRequest("chat_id of BotCommandScopeChat must be an integer here")
		}
		return fmt.Sprintf("chat:%d", id), nil
	}
	return "", badRequest("unsupported bot command scope type")
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
