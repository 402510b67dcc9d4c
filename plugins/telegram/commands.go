package telegram

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/clawhost/clawhost/sdk/channel"
)

// maxCommands is Telegram's limit of a command menu.
const maxCommands = 100

// SetCommands implements channel.CommandMenu with setMyCommands. Names are
// lowercased, stripped of a leading "/" and have '-' as '_'; names longer than 32 characters
// or with characters outside [a-z0-9_], and duplicates, are skipped (and
// logged). Empty descriptions become the command name; long ones are cut to
// 256 characters. At most 100 commands are set.
func (a *Adapter) SetCommands(ctx context.Context, cmds []channel.MenuEntry) error {
	return a.setMyCommands(ctx, "", cmds)
}

// SetChatCommands implements channel.ChatCommandMenu: setMyCommands with
// the scope BotCommandScopeChat, which Telegram shows in that chat (every
// member of a group) instead of the default menu. A forum topic has no
// menu of its own.
func (a *Adapter) SetChatCommands(ctx context.Context, menu channel.ChatMenu) error {
	if strings.TrimSpace(menu.ChatID) == "" {
		return channel.Errorf(channel.CodeInvalidRequest, "set chat commands: no chat id")
	}
	return a.setMyCommands(ctx, strings.TrimSpace(menu.ChatID), menu.Commands)
}

// setMyCommands sets the default menu (chatID "") or one chat's.
func (a *Adapter) setMyCommands(ctx context.Context, chatID string, cmds []channel.MenuEntry) error {
	if a.api == nil {
		return channel.Errorf(channel.CodeInternal, "set commands before configure")
	}
	type botCommand struct {
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	out := []botCommand{}
	seen := map[string]bool{}
	for _, c := range cmds {
		// claude's "code-review" is offered as /code_review (the host
		// reads '_' as '-' in claude's names).
		name := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(c.Name), "/"), "-", "_"))
		if !validCommandName(name) {
			a.log.Info("command not shown in the telegram menu: telegram allows only 1-32 of a-z, 0-9 and _", "command", c.Name)
			continue
		}
		if seen[name] {
			a.log.Info("command not shown in the telegram menu: listed twice", "command", c.Name)
			continue
		}
		if len(out) == maxCommands {
			a.log.Warn("telegram shows at most 100 commands; the rest are left out", "first_left_out", name)
			break
		}
		seen[name] = true
		desc := strings.Join(strings.Fields(c.Description), " ")
		if desc == "" {
			desc = name
		}
		out = append(out, botCommand{Command: name, Description: truncateUTF16(desc, 256)})
	}
	b, _ := json.Marshal(out)
	params := tgbotapi.Params{"commands": string(b)}
	if chatID != "" {
		// A numeric id is sent as the Integer Telegram documents; an
		// "@channel" name as the String.
		var id any = chatID
		if n, err := strconv.ParseInt(chatID, 10, 64); err == nil {
			id = n
		}
		scope, _ := json.Marshal(map[string]any{"type": "chat", "chat_id": id})
		params["scope"] = string(scope)
	}
	_, err := a.callTimeout(ctx, "setMyCommands", params, callTimeout)
	return toChannelError("set commands", err)
}

func validCommandName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// truncateUTF16 cuts s to at most n UTF-16 units at a rune boundary.
func truncateUTF16(s string, n int) string {
	used := 0
	for i, r := range s {
		used += utf16.RuneLen(r)
		if used > n {
			return s[:i]
		}
	}
	return s
}
