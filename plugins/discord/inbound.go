package discord

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/status"
)

// chanInfo is what the plugin needs to know of a channel.
type chanInfo struct {
	Type     discordgo.ChannelType
	GuildID  string
	ParentID string
	OwnerID  string
	Name     string
}

func (c chanInfo) thread() bool {
	return c.Type == discordgo.ChannelTypeGuildPublicThread || c.Type == discordgo.ChannelTypeGuildPrivateThread ||
		c.Type == discordgo.ChannelTypeGuildNewsThread
}

// channelCache holds channels learned from GUILD_CREATE, CHANNEL_* and
// THREAD_* events and from GET /channels/{id}.
type channelCache struct {
	mu sync.Mutex
	m  map[string]chanInfo
}

func (c *channelCache) put(ch *discordgo.Channel) {
	if ch == nil || ch.ID == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]chanInfo{}
	}
	c.m[ch.ID] = chanInfo{Type: ch.Type, GuildID: ch.GuildID, ParentID: ch.ParentID, OwnerID: ch.OwnerID, Name: ch.Name}
}

func (c *channelCache) get(id string) (chanInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.m[id]
	return i, ok
}

// channelInfo returns a channel from the cache or the API.
func (a *Adapter) channelInfo(ctx context.Context, id string) (chanInfo, bool) {
	if i, ok := a.chans.get(id); ok {
		return i, true
	}
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	ch, err := a.rest.Channel(id, opt)
	if err != nil {
		a.log.Warn("could not look the channel up", "channel", id, "error", mapErr(err))
		return chanInfo{}, false
	}
	a.chans.put(ch)
	return a.chans.get(id)
}

// dispatch handles one op 0 payload and records its sequence number. It
// reports whether the session is now READY or RESUMED.
func (a *Adapter) dispatch(ctx context.Context, c *conn, p gwPayload) (bool, error) {
	if p.S > 0 {
		c.seq.Store(p.S)
	}
	switch p.T {
	case "READY":
		var r struct {
			SessionID string              `json:"session_id"`
			ResumeURL string              `json:"resume_gateway_url"`
			User      discordgo.User      `json:"user"`
			App       struct{ ID string } `json:"application"`
		}
		if err := json.Unmarshal(p.D, &r); err != nil {
			return false, err
		}
		old := a.me.Load()
		me := &identity{UserID: r.User.ID, Username: r.User.Username, AppID: r.App.ID, Roles: map[string]string{}}
		if old != nil {
			for g, role := range old.Roles {
				me.Roles[g] = role
			}
		}
		a.me.Store(me)
		if err := a.state.setIdentity(me); err != nil {
			return false, err
		}
		a.log.Info("connected to discord", "bot", r.User.Username, "bot_id", r.User.ID)
		a.status.Report(status.Status{State: status.Ready})
		if err := a.state.setSession(r.SessionID, r.ResumeURL, p.S); err != nil {
			return true, err
		}
		go a.registerMenu(ctx)
		return true, a.backfill(ctx)
	case "RESUMED":
		a.log.Info("gateway session resumed", "seq", p.S)
		a.status.Report(status.Status{State: status.Ready})
		return true, a.state.advance(p.S, "", "", time.Time{})
	case "GUILD_CREATE":
		var g struct {
			ID    string `json:"id"`
			Roles []struct {
				ID   string `json:"id"`
				Tags struct {
					BotID string `json:"bot_id"`
				} `json:"tags"`
			} `json:"roles"`
			Channels []*discordgo.Channel `json:"channels"`
			Threads  []*discordgo.Channel `json:"threads"`
		}
		if err := json.Unmarshal(p.D, &g); err == nil {
			if me := a.me.Load(); me != nil {
				for _, r := range g.Roles {
					if r.Tags.BotID == me.UserID {
						cp := *me
						cp.Roles = map[string]string{g.ID: r.ID}
						for k, v := range me.Roles {
							if k != g.ID {
								cp.Roles[k] = v
							}
						}
						a.me.Store(&cp)
						if err := a.state.setIdentity(&cp); err != nil {
							return false, err
						}
					}
				}
			}
			for _, ch := range append(g.Channels, g.Threads...) {
				ch.GuildID = g.ID
				a.chans.put(ch)
			}
		}
	case "CHANNEL_CREATE", "CHANNEL_UPDATE", "THREAD_CREATE", "THREAD_UPDATE":
		var ch discordgo.Channel
		if json.Unmarshal(p.D, &ch) == nil {
			a.chans.put(&ch)
		}
	case "MESSAGE_CREATE":
		var m discordgo.Message
		if err := json.Unmarshal(p.D, &m); err != nil {
			a.log.Warn("skipping a message that does not decode", "error", err)
			break
		}
		return false, a.take(ctx, p.S, &m)
	case "INTERACTION_CREATE":
		return false, a.interaction(ctx, p.S, p.D)
	}
	return false, a.state.advance(p.S, "", "", time.Time{})
}

// take maps a message and saves it for the host along with seq.
func (a *Adapter) take(ctx context.Context, seq int64, m *discordgo.Message) error {
	in, ok := a.toInbound(ctx, m)
	if !ok {
		return a.state.advance(seq, m.ChannelID, m.ID, m.Timestamp)
	}
	// A newer message in the chat is answered in the channel, not through
	// an earlier slash command's webhook.
	a.state.dropInteractions(in.ChatID, in.ThreadID)
	return a.state.advance(seq, m.ChannelID, m.ID, m.Timestamp, in)
}

// backfill reads back the channels active before a session was lost
// (every message after the newest seen), so nothing written while the
// plugin was away is missed. Messages come oldest first; the host drops
// any it already has.
func (a *Adapter) backfill(ctx context.Context) error {
	from := a.state.backfillFrom(a.now())
	if len(from) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, backfillTimeout)
	defer cancel()
	total := 0
	for ch, after := range from {
		for range 10 { // at most 1000 messages per channel
			msgs, err := a.rest.ChannelMessages(ch, 100, "", after, "", discordgo.WithContext(ctx))
			if err != nil {
				a.log.Warn("could not read a channel back", "channel", ch, "error", mapErr(err))
				break
			}
			sort.Slice(msgs, func(i, j int) bool { return snowflakeLess(msgs[i].ID, msgs[j].ID) })
			for _, m := range msgs {
				if m.GuildID == "" {
					if info, ok := a.chans.get(ch); ok {
						m.GuildID = info.GuildID
					}
				}
				if err := a.take(ctx, 0, m); err != nil {
					return err
				}
				after = m.ID
				total++
			}
			if len(msgs) < 100 {
				break
			}
		}
	}
	if total > 0 {
		a.log.Info("read back messages written while the session was lost", "messages", total, "channels", len(from))
	}
	return nil
}

// mentionRE matches user and role mentions: <@id>, <@!id>, <@&id>.
var mentionRE = regexp.MustCompile(`<@([!&]?)(\d+)>`)

// toInbound maps a Discord message; false means nothing for the agent
// (the bot's own, another bot's, a system message, an empty one).
func (a *Adapter) toInbound(ctx context.Context, m *discordgo.Message) (channel.InboundMessage, bool) {
	me := a.me.Load()
	if me == nil || m.Author == nil || m.Author.ID == me.UserID || m.Author.Bot || m.WebhookID != "" {
		return channel.InboundMessage{}, false
	}
	if m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply {
		return channel.InboundMessage{}, false
	}
	in := channel.InboundMessage{
		MessageID: m.ID,
		Sender:    sender(m.Author, m.Member),
		Timestamp: m.Timestamp,
	}
	info := a.place(ctx, &in, m.GuildID, m.ChannelID)

	mentioned := false
	for _, u := range m.Mentions {
		mentioned = mentioned || (u != nil && u.ID == me.UserID)
	}
	role := me.Roles[m.GuildID]
	for _, r := range m.MentionRoles {
		mentioned = mentioned || (role != "" && r == role)
	}
	names := map[string]string{}
	for _, u := range m.Mentions {
		if u != nil {
			names[u.ID] = "@" + u.Username
		}
	}
	// Text shows mentions as @name; CommandText drops the bot's.
	text := mentionRE.ReplaceAllStringFunc(m.Content, func(s string) string {
		sub := mentionRE.FindStringSubmatch(s)
		if sub[1] != "&" && sub[2] == me.UserID {
			mentioned = true
			return "@" + me.Username
		}
		if sub[1] == "&" && sub[2] == role && role != "" {
			mentioned = true
			return "@" + me.Username
		}
		if n, ok := names[sub[2]]; ok {
			return n
		}
		return s
	})
	command := strings.Join(strings.Fields(mentionRE.ReplaceAllStringFunc(m.Content, func(s string) string {
		sub := mentionRE.FindStringSubmatch(s)
		if sub[2] == me.UserID || (sub[1] == "&" && sub[2] == role) {
			return ""
		}
		if n, ok := names[sub[2]]; ok {
			return n
		}
		return s
	})), " ")
	in.Text = text
	if command != text {
		in.CommandText = command
	}
	if r := m.ReferencedMessage; r != nil && r.Author != nil {
		in.ReplyTo = &channel.ReplyTo{MessageID: r.ID, Text: r.Content, SenderID: r.Author.ID,
			SenderName: sender(r.Author, r.Member).Name, ToBot: r.Author.ID == me.UserID}
		mentioned = mentioned || in.ReplyTo.ToBot
	}
	// A thread the bot opened is a conversation with it.
	if in.ThreadID != "" && info.OwnerID == me.UserID {
		mentioned = true
	}
	in.WasMentioned = mentioned
	for _, at := range m.Attachments {
		if at == nil {
			continue
		}
		in.Media = append(in.Media, channel.Media{Kind: mediaKind(at, m.Flags), Ref: at.URL, MIME: at.ContentType,
			Size: int64(at.Size), Filename: at.Filename})
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Media) == 0 {
		return channel.InboundMessage{}, false
	}
	if in.ThreadID != "" {
		// What the thread hangs from, for its session's first turn.
		in.ThreadContext = a.threadContext(ctx, info.ParentID, in.ThreadID, m.ID)
	}
	if a.cfg.ThreadPerConversation && in.ChatType == channel.ChatGroup && in.ThreadID == "" && mentioned {
		if th := a.openThread(ctx, m, command); th != "" {
			in.ThreadID = th
		}
	}
	return in, true
}

// place sets the chat of a message or interaction in channelID: a DM is
// a direct chat; a server channel a group; a thread the thread of its
// parent channel, titled "parent › thread". It returns the channel as far
// as it is known (zero for a DM).
func (a *Adapter) place(ctx context.Context, in *channel.InboundMessage, guildID, channelID string) chanInfo {
	in.ChatType, in.ChatID = channel.ChatDirect, channelID
	if guildID == "" {
		return chanInfo{}
	}
	in.ChatType = channel.ChatGroup
	info, _ := a.channelInfo(ctx, channelID)
	in.ChatTitle = info.Name
	if info.thread() && info.ParentID != "" {
		in.ChatID, in.ThreadID = info.ParentID, channelID
		if parent, ok := a.channelInfo(ctx, info.ParentID); ok {
			in.ChatTitle = parent.Name + " › " + info.Name
		}
	}
	return info
}

func sender(u *discordgo.User, mem *discordgo.Member) channel.Sender {
	s := channel.Sender{ID: u.ID, Username: u.Username, Name: u.Username, IsBot: u.Bot}
	if u.GlobalName != "" {
		s.Name = u.GlobalName
	}
	if mem != nil && mem.Nick != "" {
		s.Name = mem.Nick
	}
	return s
}

// mediaKind is an attachment's kind: a voice note by the message's flag,
// the rest by the attachment's MIME type.
func mediaKind(at *discordgo.MessageAttachment, flags discordgo.MessageFlags) channel.MediaKind {
	if flags&discordgo.MessageFlagsIsVoiceMessage != 0 {
		return channel.MediaVoice
	}
	return channel.MediaKindOf(at.ContentType)
}

// openThread starts a thread on m for thread_per_conversation and returns
// its id ("" when it could not). A thread started from a message has the
// message's id, so a message seen twice (a replay) finds its thread.
func (a *Adapter) openThread(ctx context.Context, m *discordgo.Message, text string) string {
	name := strings.TrimSpace(text)
	if name == "" {
		name = "conversation"
	}
	if utf8.RuneCountInString(name) > 60 {
		name = string([]rune(name)[:59]) + "…"
	}
	opt, cancel := a.call(ctx, callTimeout)
	defer cancel()
	th, err := a.rest.MessageThreadStartComplex(m.ChannelID, m.ID, &discordgo.ThreadStart{
		Name: name, AutoArchiveDuration: int(a.cfg.ThreadAutoArchive), Type: discordgo.ChannelTypeGuildPublicThread}, opt)
	if err != nil {
		if restCode(err) == 160004 { // a thread was already created for this message
			return m.ID
		}
		a.log.Warn("could not open a thread; answering in the channel", "channel", m.ChannelID, "error", mapErr(err))
		return ""
	}
	if th.OwnerID == "" {
		if me := a.me.Load(); me != nil {
			th.OwnerID = me.UserID
		}
	}
	a.chans.put(th)
	return th.ID
}
