package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/sdk/channel"
)

// argsOption is the one string option of every slash command: the text
// after the command ("/model sonnet").
const argsOption = "args"

// commandName is Discord's rule for a slash command name,
// ^[-_\p{Ll}\p{N}]{1,32}$, checked by hand: the expression compiles to 32
// copies of two large Unicode classes, 1.2 MB that every Discord plugin
// kept from its start.
func commandName(name string) bool {
	n := 0
	for _, r := range name {
		if n++; n > 32 || !(r == '-' || r == '_' || unicode.IsLower(r) || unicode.IsNumber(r)) {
			return false
		}
	}
	return n > 0
}

// SetCommands implements channel.CommandMenu: the host's commands become
// slash commands, each with an optional "args" text option. They are
// registered per guild in guilds (instant) or globally, once the bot knows
// its application id (after the first READY).
func (a *Adapter) SetCommands(ctx context.Context, cmds []channel.MenuEntry) error {
	if !*a.cfg.SlashCommands {
		return nil
	}
	a.mu.Lock()
	a.menu = append([]channel.MenuEntry(nil), cmds...)
	a.menuDone = false
	a.mu.Unlock()
	if me := a.me.Load(); me == nil || me.AppID == "" {
		return nil // registered after READY
	}
	return a.registerMenu(ctx)
}

// registerMenu registers the menu unless it is registered already.
func (a *Adapter) registerMenu(ctx context.Context) error {
	me := a.me.Load()
	a.mu.Lock()
	menu, done := a.menu, a.menuDone
	a.mu.Unlock()
	if me == nil || me.AppID == "" || done || menu == nil {
		return nil
	}
	cmds := toCommands(menu)
	scopes := a.cfg.Guilds
	if len(scopes) == 0 {
		scopes = []string{""}
	}
	for _, g := range scopes {
		opt, cancel := a.call(ctx, callTimeout)
		_, err := a.rest.ApplicationCommandBulkOverwrite(me.AppID, g, cmds, opt)
		cancel()
		if err != nil {
			err = mapErr(err)
			a.log.Warn("could not register the slash commands", "guild", g, "error", err)
			return fmt.Errorf("register slash commands: %w", err)
		}
	}
	a.mu.Lock()
	a.menuDone = true
	a.mu.Unlock()
	a.log.Debug("slash commands registered", "commands", len(cmds), "guilds", len(a.cfg.Guilds))
	return nil
}

// toCommands turns menu entries into application commands, skipping names
// Discord refuses and duplicates.
func toCommands(menu []channel.MenuEntry) []*discordgo.ApplicationCommand {
	seen := map[string]bool{}
	out := []*discordgo.ApplicationCommand{}
	for _, e := range menu {
		name := strings.ToLower(strings.TrimPrefix(e.Name, "/"))
		if !commandName(name) || seen[name] {
			continue
		}
		seen[name] = true
		desc := strings.TrimSpace(e.Description)
		if desc == "" {
			desc = name
		}
		if utf8.RuneCountInString(desc) > 100 {
			desc = string([]rune(desc)[:99]) + "…"
		}
		out = append(out, &discordgo.ApplicationCommand{
			Name: name, Description: desc, Type: discordgo.ChatApplicationCommand,
			Options: []*discordgo.ApplicationCommandOption{{
				Type: discordgo.ApplicationCommandOptionString, Name: argsOption, Description: "arguments", Required: false,
			}},
		})
	}
	return out
}

// interactionPayload is the part of INTERACTION_CREATE the plugin reads.
type interactionPayload struct {
	ID            string `json:"id"`
	ApplicationID string `json:"application_id"`
	Type          int    `json:"type"`
	Token         string `json:"token"`
	ChannelID     string `json:"channel_id"`
	GuildID       string `json:"guild_id"`
	Data          struct {
		// Name and Options: a slash command.
		Name    string `json:"name"`
		Options []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"options"`
		// CustomID and ComponentType: a press.
		CustomID      string `json:"custom_id"`
		ComponentType int    `json:"component_type"`
	} `json:"data"`
	// Message is the message whose button was pressed.
	Message *pressedMessage   `json:"message"`
	Member  *discordgo.Member `json:"member"`
	User    *discordgo.User   `json:"user"`
}

// user is who made the interaction: member.user in a server, user in a DM.
func (p *interactionPayload) user() *discordgo.User {
	if p.Member != nil && p.Member.User != nil {
		return p.Member.User
	}
	return p.User
}

// interaction handles INTERACTION_CREATE: slash commands (command) and
// button presses (press); other kinds are skipped.
func (a *Adapter) interaction(ctx context.Context, seq int64, raw json.RawMessage) error {
	var p interactionPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		a.log.Warn("skipping an interaction that does not decode", "error", err)
		return a.state.advance(seq, "", "", time.Time{})
	}
	switch discordgo.InteractionType(p.Type) {
	case discordgo.InteractionApplicationCommand:
		return a.command(ctx, seq, p)
	case discordgo.InteractionMessageComponent:
		return a.press(ctx, seq, p)
	}
	return a.state.advance(seq, "", "", time.Time{})
}

// command handles a slash command: it is deferred at once (Discord wants
// an answer within 3 s; the user sees "thinking…") and handed to the host
// as "/name args". The reply goes through the interaction's webhook (see
// Send).
func (a *Adapter) command(ctx context.Context, seq int64, p interactionPayload) error {
	u := p.user()
	me := a.me.Load()
	if u == nil || me == nil {
		return a.state.advance(seq, "", "", time.Time{})
	}
	now := a.now()
	ix := &discordgo.Interaction{ID: p.ID, AppID: p.ApplicationID, Token: p.Token}
	opt, cancel := a.call(ctx, 3*time.Second)
	err := a.rest.InteractionRespond(ix, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}, opt)
	cancel()
	if err != nil && restCode(err) != 40060 { // 40060: acknowledged already (a replay)
		a.log.Warn("could not defer the slash command", "command", p.Data.Name, "error", mapErr(err))
	}
	text := "/" + p.Data.Name
	for _, o := range p.Data.Options {
		if v := fmt.Sprint(o.Value); o.Value != nil && v != "" {
			text += " " + v
		}
	}
	in := channel.InboundMessage{MessageID: p.ID, Sender: sender(u, p.Member), Text: text, WasMentioned: true, Timestamp: now}
	a.place(ctx, &in, p.GuildID, p.ChannelID)
	if err := a.state.addInteraction(&interaction{ID: p.ID, Token: p.Token, AppID: p.ApplicationID,
		ChatID: in.ChatID, ThreadID: in.ThreadID, Created: now}, now); err != nil {
		return err
	}
	return a.state.advance(seq, "", "", time.Time{}, in)
}
