package discord

import (
	"context"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/clawhost/clawhost/sdk/channel"
)

// buttonLimits are Discord's limits of buttons under a message: 5 rows of
// 5, a custom_id of up to 100 characters, a label of up to 80.
var buttonLimits = channel.ButtonLimits{Platform: "Discord", Rows: 5, PerRow: 5, ID: 100, Label: 80}

// Acknowledging a press.
const (
	// ackDeadline is how long a press waits for the host to store it
	// before it is acknowledged anyway: Discord wants the answer within
	// 3 s of the press and shows "This interaction failed" after that.
	ackDeadline = 2500 * time.Millisecond
	// ackTimeout bounds the acknowledgement request.
	ackTimeout = 3 * time.Second
)

// components turns the host's buttons into Discord's action rows of
// secondary buttons, or refuses with CodeInvalidRequest what Discord
// would: more than 5 rows or 5 buttons in a row, an id that is empty, over
// 100 characters or used twice in the message, a blank label or one over
// 80 characters. Empty rows are left out; no buttons is nil.
func components(rows [][]channel.Button) ([]discordgo.MessageComponent, error) {
	if err := buttonLimits.Check(rows); err != nil {
		return nil, err
	}
	var out []discordgo.MessageComponent
	for _, row := range rows {
		var r discordgo.ActionsRow
		for _, b := range row {
			r.Components = append(r.Components, discordgo.Button{Label: b.Label, Style: discordgo.SecondaryButton, CustomID: b.ID})
		}
		if len(r.Components) > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

// pressedMessage is the part of a pressed message the plugin reads: its id
// and buttons. (discordgo.Message fails to decode a component type it does
// not know; this never does.)
type pressedMessage struct {
	ID         string `json:"id"`
	Components []struct {
		Components []struct {
			Type     int    `json:"type"`
			CustomID string `json:"custom_id"`
			Label    string `json:"label"`
		} `json:"components"`
	} `json:"components"`
}

// label is the label of the button customID, "" when the message has none.
func (m *pressedMessage) label(customID string) string {
	for _, r := range m.Components {
		for _, c := range r.Components {
			if c.Type == int(discordgo.ButtonComponent) && c.CustomID == customID {
				return c.Label
			}
		}
	}
	return ""
}

// press handles a button press (a message component interaction): it
// becomes an InboundMessage kept in the state file for the host like a
// message — MessageID "ix:<interaction id>", the button's label as text
// (its id when the label is unknown), the presser as sender, the button's
// id and message as the Action. The interaction is acknowledged (see
// expectAck) once the host stored the press, or at ackDeadline. Presses
// of other components, by bots, or without a message are skipped.
func (a *Adapter) press(ctx context.Context, seq int64, p interactionPayload) error {
	u := p.user()
	if u == nil || u.Bot || p.Message == nil || p.Data.CustomID == "" || p.Data.ComponentType != int(discordgo.ButtonComponent) {
		a.log.Debug("skipping a component interaction", "component_type", p.Data.ComponentType)
		return a.state.advance(seq, "", "", time.Time{})
	}
	in := channel.InboundMessage{
		MessageID:    "ix:" + p.ID,
		Sender:       sender(u, p.Member),
		Text:         p.Message.label(p.Data.CustomID),
		WasMentioned: true,
		Timestamp:    a.now(),
		Action:       &channel.Action{ButtonID: p.Data.CustomID, MessageID: p.Message.ID},
	}
	if in.Text == "" {
		in.Text = p.Data.CustomID
	}
	// The deadline runs from here: looking the channel up may take a
	// request.
	a.expectAck(ctx, in.MessageID, discordgo.Interaction{ID: p.ID, AppID: p.ApplicationID, Token: p.Token})
	a.place(ctx, &in, p.GuildID, p.ChannelID)
	return a.state.advance(seq, "", "", time.Time{}, in)
}

// acks are the presses whose interaction awaits its answer, by the
// InboundMessage.MessageID of the press. An entry is taken exactly once:
// by ackDelivered when the host stored the press, by its timer at the
// deadline, or by closeAcks when Run ends.
type acks struct {
	mu      sync.Mutex
	pending map[string]*pendingAck
	closed  bool
	wg      sync.WaitGroup // acknowledgements under way
}

type pendingAck struct {
	ix    discordgo.Interaction
	timer *time.Timer
}

// expectAck registers a press to acknowledge; its timer acknowledges it
// after a.ackWait if the host has not stored it by then (the press is
// still delivered when the host takes it). A press seen again (a replay
// after RESUME) keeps its first entry.
func (a *Adapter) expectAck(ctx context.Context, key string, ix discordgo.Interaction) {
	q := &a.acks
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || q.pending[key] != nil {
		return
	}
	if q.pending == nil {
		q.pending = map[string]*pendingAck{}
	}
	p := &pendingAck{ix: ix}
	p.timer = time.AfterFunc(a.ackWait, func() {
		if p := a.takeAck(key); p != nil {
			a.log.Debug("the host has not stored a button press yet; acknowledging it before Discord's 3 s run out", "interaction", p.ix.ID)
			a.ack(ctx, p)
		}
	})
	q.pending[key] = p
}

// takeAck removes the press key from the pending ones and counts its
// acknowledgement as under way; nil when it is not pending (answered
// already, or loaded from the state file after a restart).
func (a *Adapter) takeAck(key string) *pendingAck {
	q := &a.acks
	q.mu.Lock()
	defer q.mu.Unlock()
	p := q.pending[key]
	if p == nil || q.closed {
		return nil
	}
	delete(q.pending, key)
	p.timer.Stop()
	q.wg.Add(1)
	return p
}

// ackDelivered acknowledges the presses among msgs, which the host has
// stored; it does not wait for Discord.
func (a *Adapter) ackDelivered(ctx context.Context, msgs []channel.InboundMessage) {
	for _, m := range msgs {
		if m.Action == nil {
			continue
		}
		if p := a.takeAck(m.MessageID); p != nil {
			go a.ack(ctx, p)
		}
	}
}

// closeAcks ends acknowledging when Run ends: presses still waiting are
// answered now (they are in the state file and reach the host after the
// restart; unanswered, Discord would tell the presser it failed), and
// answers under way are waited for.
func (a *Adapter) closeAcks(ctx context.Context) {
	q := &a.acks
	q.mu.Lock()
	left := make([]*pendingAck, 0, len(q.pending))
	for _, p := range q.pending {
		p.timer.Stop()
		left = append(left, p)
	}
	q.pending, q.closed = nil, true
	q.wg.Add(len(left))
	q.mu.Unlock()
	for _, p := range left {
		go a.ack(ctx, p)
	}
	q.wg.Wait()
}

// ack answers a press with a deferred update (type 6: nothing visible,
// the button stops spinning), also when ctx ends meanwhile (Run ending).
// A failure is logged, never returned: the press is the host's already.
func (a *Adapter) ack(ctx context.Context, p *pendingAck) {
	defer a.acks.wg.Done()
	opt, cancel := a.call(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	err := a.rest.InteractionRespond(&p.ix, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}, opt)
	switch code := restCode(err); {
	case err == nil:
	case code == 40060:
		a.log.Debug("button press acknowledged already (a replay)", "interaction", p.ix.ID)
	case code == 10062:
		a.log.Warn("could not acknowledge a button press in time; Discord shows the presser that it failed, the press still counts", "interaction", p.ix.ID)
	default:
		a.log.Warn("could not acknowledge a button press", "interaction", p.ix.ID, "error", mapErr(err))
	}
}
