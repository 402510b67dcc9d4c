package chaos

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawhost/clawhost/core/e2e"
	"github.com/clawhost/clawhost/plugins/slack/slacktest"
	"github.com/clawhost/clawhost/plugins/telegram/telegramtest"
)

// platform is the chat platform a scenario runs on: its fake, the
// plugin's block, and what the chats show. Telegram is the default; a
// scenario may name another (scenario.platform) for the faults every
// channel must survive (a plugin killed).
type platform interface {
	// instance is the plugin instance's name (the journal's instance).
	instance() string
	plugin() e2e.Plugin
	// binary is the plugin's executable name.
	binary() string
	// sender is chat's user as access lists name it ("tg:1001").
	sender(chat int64) string
	// ready: the plugin is connected and takes messages.
	ready() bool
	// push sends text from chat's user; it returns the chat id and the
	// message id the host journals it under.
	push(chat int64, text string) (chatID, messageID string)
	// views is what each chat shows in the end: each bot message's last
	// text, in the order they were first sent, by chat id.
	views() map[string][]string
	// unconfirm keeps the platform from learning that the host stored
	// what it delivered (until clearFailures), so it is delivered again.
	unconfirm()
	clearFailures()
	close()
}

// newPlatform is the platform a scenario names ("" is Telegram).
func newPlatform(name string) platform {
	if name == "slack" {
		s := &slackPlatform{srv: slacktest.NewServer(slackBotToken, slackAppToken), dm: map[int64]string{}}
		for _, c := range chats {
			s.dm[c] = s.srv.AddDM(slacktest.User{ID: s.user(c), Name: "u" + strconv.FormatInt(c, 10)}).ID
		}
		return s
	}
	return &telegramPlatform{srv: telegramtest.NewServer(token)}
}

// telegramPlatform is the fake Bot API.
type telegramPlatform struct {
	srv *telegramtest.Server
	mu  sync.Mutex // pushes: the fake numbers messages from its update counter
}

func (p *telegramPlatform) instance() string { return "tg" }
func (p *telegramPlatform) binary() string   { return "clawhost-telegram" }
func (p *telegramPlatform) sender(chat int64) string {
	return "tg:" + strconv.FormatInt(chat, 10)
}
func (p *telegramPlatform) plugin() e2e.Plugin {
	return e2e.Plugin{Name: "tg", Source: "telegram", Config: e2e.Attrs{
		"token": token, "api_endpoint": p.srv.APIEndpoint(), "poll_timeout": 30}}
}
func (p *telegramPlatform) ready() bool { return len(p.srv.Commands()) > 0 }
func (p *telegramPlatform) push(chat int64, text string) (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	update := p.srv.PushText(telegramtest.PrivateChat(chat), telegramtest.User{ID: chat, FirstName: "U" + strconv.FormatInt(chat, 10)}, text)
	return strconv.FormatInt(chat, 10), strconv.Itoa(update + 1000)
}
func (p *telegramPlatform) views() map[string][]string {
	at := map[string]int{}
	out := map[string][]string{}
	for _, s := range p.srv.Sent() {
		k := s.ChatID + "/" + strconv.Itoa(s.MessageID)
		if i, ok := at[k]; ok {
			out[s.ChatID][i] = s.Visible
			continue
		}
		at[k] = len(out[s.ChatID])
		out[s.ChatID] = append(out[s.ChatID], s.Visible)
	}
	return out
}

// unconfirm: getUpdates fails (502), so the updates the host stored and
// acked are not confirmed to Telegram and come again.
func (p *telegramPlatform) unconfirm()     { p.srv.Fail("getUpdates", -1, telegramtest.ServerError(502)) }
func (p *telegramPlatform) clearFailures() { p.srv.ClearFailures() }
func (p *telegramPlatform) close()         { p.srv.Close() }

// The Slack app's tokens in the slack scenarios.
const (
	slackBotToken = "xoxb-chaos-bot"
	slackAppToken = "xapp-chaos-app"
)

// slackPlatform is the fake Slack: each chat is a member writing to the
// bot in their DM, over Socket Mode.
type slackPlatform struct {
	srv *slacktest.Server
	dm  map[int64]string
}

func (p *slackPlatform) user(chat int64) string { return "U" + strconv.FormatInt(chat, 10) }
func (p *slackPlatform) instance() string       { return "sl" }
func (p *slackPlatform) binary() string         { return "clawhost-slack" }
func (p *slackPlatform) sender(chat int64) string {
	return "sl:" + p.user(chat)
}
func (p *slackPlatform) plugin() e2e.Plugin {
	return e2e.Plugin{Name: "sl", Source: "slack", Config: e2e.Attrs{
		"bot_token": slackBotToken, "app_token": slackAppToken, "api_endpoint": p.srv.Endpoint()}}
}

// ready: a Socket Mode connection is up (a restarted plugin's is new).
func (p *slackPlatform) ready() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	return p.srv.WaitConnected(ctx, 1) == nil
}
func (p *slackPlatform) push(chat int64, text string) (string, string) {
	ts, _ := p.srv.Post(slacktest.Message{Channel: p.dm[chat], User: p.user(chat), Text: text})
	return p.dm[chat], ts
}
func (p *slackPlatform) views() map[string][]string {
	out := map[string][]string{}
	for _, dm := range p.dm {
		for _, m := range p.srv.BotMessages(dm, "") {
			out[dm] = append(out[dm], m.Text)
		}
	}
	return out
}

// unconfirm: the fake loses the plugin's acknowledgements, so every
// envelope the host stored is sent again on the next connection.
func (p *slackPlatform) unconfirm()     { p.srv.LoseAcks(true) }
func (p *slackPlatform) clearFailures() { p.srv.LoseAcks(false) }
func (p *slackPlatform) close()         { p.srv.Close() }

// liveStops are the bot messages whose last state still has the turn
// card's Stop button, "chat/message" each (Telegram's scenarios only).
func (p *telegramPlatform) liveStops() []string {
	last := map[string]telegramtest.Sent{}
	var order []string
	for _, s := range p.srv.Sent() {
		k := s.ChatID + "/" + strconv.Itoa(s.MessageID)
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = s
	}
	var out []string
	for _, k := range order {
		for _, row := range last[k].Keyboard {
			for _, b := range row {
				if strings.Contains(b.Text, "Stop") {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// documents is how many bot messages of chat carry a file called name.
func (p *telegramPlatform) documents(chat, name string) int {
	seen := map[int]bool{}
	for _, s := range p.srv.Sent() {
		if s.ChatID == chat && s.File != nil && s.File.Filename == name {
			seen[s.MessageID] = true
		}
	}
	return len(seen)
}

// reaction is the bot's reaction on message id of chat and how many
// times it was asked to set emoji there.
func (p *telegramPlatform) reaction(chat, id, emoji string) (string, int) {
	n := 0
	for _, r := range p.srv.Requests("setMessageReaction") {
		if r.Params.Get("chat_id") == chat && r.Params.Get("message_id") == id && strings.Contains(r.Params.Get("reaction"), emoji) {
			n++
		}
	}
	c, _ := strconv.ParseInt(chat, 10, 64)
	mid, _ := strconv.Atoi(id)
	return p.srv.Reaction(c, mid), n
}
