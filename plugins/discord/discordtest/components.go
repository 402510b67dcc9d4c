package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"
)

// Component and button numbers (Discord's).
const (
	// ComponentActionRow is an action row (ActionRow.Type).
	ComponentActionRow = 1
	// ComponentButton is a button (Component.Type).
	ComponentButton = 2

	// ButtonPrimary … ButtonDanger are the styles of buttons with a
	// custom_id (Component.Style); link and premium buttons are not served.
	ButtonPrimary   = 1
	ButtonSecondary = 2
	ButtonSuccess   = 3
	ButtonDanger    = 4
)

// Interaction types (Interaction.Type) and the callback types the fake
// knows (Callback.Type).
const (
	InteractionApplicationCommand = 2
	InteractionMessageComponent   = 3

	// CallbackChannelMessage answers with a message.
	CallbackChannelMessage = 4
	// CallbackDeferredChannelMessage shows "thinking…" as the original
	// response (slash commands).
	CallbackDeferredChannelMessage = 5
	// CallbackDeferredUpdate acknowledges a component interaction without
	// anything visible; only valid for component interactions.
	CallbackDeferredUpdate = 6
	// CallbackUpdateMessage edits the message of a component interaction;
	// only valid for component interactions.
	CallbackUpdateMessage = 7
	// CallbackModal opens a modal.
	CallbackModal = 9
)

// Discord's limits of message components.
const (
	MaxActionRows     = 5
	MaxRowComponents  = 5
	MaxCustomIDLength = 100 // characters
	MaxButtonLabel    = 80  // characters
)

// DefaultInteractionDeadline is how long after its creation an
// interaction accepts its callback (Discord: 3 s); later callbacks are
// answered 404 code 10062 "Unknown interaction".
const DefaultInteractionDeadline = 3 * time.Second

// SetInteractionDeadline sets how long after its creation an interaction
// accepts its callback; d <= 0 accepts it at any time.
func (s *Server) SetInteractionDeadline(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ixDeadline = d
}

// PressButton dispatches the INTERACTION_CREATE of u pressing the button
// customID under the bot's message messageID, as Discord does: type 3
// (message component), data {custom_id, component_type 2}, the message
// with its components, a token, and member.user in a server or user in a
// DM. The press is to be answered at /interactions/{id}/{token}/callback
// (see Callbacks, WaitCallbacks). It fails when the message has no such
// button (never sent, or removed by an edit) or when no gateway session
// would receive the press.
func (s *Server) PressButton(messageID, customID string, u User) (Interaction, error) {
	s.mu.Lock()
	m, ok := s.messages[messageID]
	found := false
	if ok {
		for _, r := range m.Components {
			for _, c := range r.Components {
				found = found || (c.Type == ComponentButton && c.CustomID == customID)
			}
		}
	}
	if !found {
		s.mu.Unlock()
		return Interaction{}, fmt.Errorf("message %s has no button %q", messageID, customID)
	}
	c := s.channels[m.ChannelID]
	in := Interaction{ID: s.newIDLocked(), ApplicationID: AppID, Type: InteractionMessageComponent, ChannelID: m.ChannelID, GuildID: c.GuildID, Version: 1}
	in.Token = "itoken-" + in.ID
	in.Data.CustomID, in.Data.ComponentType = customID, ComponentButton
	cp := *m
	in.Message = &cp
	in.setSender(c.GuildID, u)
	s.addInteractionLocked(in)
	s.mu.Unlock()
	if s.gw.dispatch("INTERACTION_CREATE", in) == 0 {
		return in, errors.New("no gateway session: nobody received the press")
	}
	return in, nil
}

func (s *Server) addInteractionLocked(in Interaction) {
	s.interactions[in.Token] = in
	s.ixCreated[in.ID] = time.Now()
}

// WaitCallbacks waits until at least n interaction callbacks were accepted
// and returns them.
func (s *Server) WaitCallbacks(ctx context.Context, n int) ([]Callback, error) {
	return waitFor(ctx, s, n, "interaction callbacks", func() ([]Callback, chan struct{}) { return s.callbacks, s.callbackNotify })
}

// callback serves POST /interactions/{id}/{token}/callback as Discord
// does: 404 10062 for an unknown interaction or one past its deadline,
// 400 40060 for a second answer, 400 50035 for a type the interaction
// cannot take (a deferred update of a slash command).
func (s *Server) callback(w http.ResponseWriter, body []byte, id, token string) {
	var req struct {
		Type int `json:"type"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		apiError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.interactions[token]
	if !ok || in.ID != id {
		apiError(w, 404, 10062, "Unknown interaction")
		return
	}
	for _, c := range s.callbacks {
		if c.Interaction == id {
			apiError(w, 400, 40060, "Interaction has already been acknowledged.")
			return
		}
	}
	if d := s.ixDeadline; d > 0 && time.Since(s.ixCreated[id]) > d {
		apiError(w, 404, 10062, "Unknown interaction")
		return
	}
	valid := map[int]bool{CallbackChannelMessage: true, CallbackDeferredChannelMessage: true, CallbackModal: true}
	if in.Type == InteractionMessageComponent {
		valid[CallbackDeferredUpdate], valid[CallbackUpdateMessage] = true, true
	}
	if !valid[req.Type] {
		formError(w, formErr{"INTERACTION_RESPONSE_TYPE_INVALID", fmt.Sprintf("Interaction response type %d is not valid for interaction type %d", req.Type, in.Type), []string{"type"}})
		return
	}
	s.callbacks = append(s.callbacks, Callback{Interaction: id, Token: token, Type: req.Type, Time: time.Now()})
	close(s.callbackNotify)
	s.callbackNotify = make(chan struct{})
	if req.Type == CallbackDeferredChannelMessage { // "clawbot is thinking…" appears as the original response
		m := &Message{ID: s.newIDLocked(), ChannelID: in.ChannelID, GuildID: in.GuildID, Author: s.bot, Timestamp: time.Now().UTC(), WebhookID: AppID}
		s.storeLocked(m)
		s.interactions[token+"/original"] = Interaction{ID: m.ID}
	}
	w.WriteHeader(http.StatusNoContent)
}

// formErr is one entry of Discord's 400 code 50035 "Invalid Form Body":
// an error code and message at a path of the request's JSON.
type formErr struct {
	code, msg string
	path      []string
}

// formError answers 400 code 50035 with Discord's error tree, e.g.
// {"errors": {"components": {"0": {"components": {"_errors": [{"code":
// "BASE_TYPE_MAX_LENGTH", "message": "Must be 5 or fewer in length."}]}}}}}.
func formError(w http.ResponseWriter, e formErr) {
	var tree any = map[string]any{"_errors": []map[string]string{{"code": e.code, "message": e.msg}}}
	for i := len(e.path) - 1; i >= 0; i-- {
		tree = map[string]any{e.path[i]: tree}
	}
	writeJSON(w, 400, map[string]any{"code": 50035, "message": "Invalid Form Body", "errors": tree})
}

// components is the components field of a message create or edit:
// absent, null, or a list of rows.
type components struct {
	present bool // the field was in the request (null counts: it clears)
	rows    []ActionRow
}

func (c *components) UnmarshalJSON(b []byte) error {
	c.present = true
	return json.Unmarshal(b, &c.rows)
}

// check holds the rows to Discord's rules: at most 5 action rows of 1 to 5
// buttons (the only components the fake serves), each with a style of 1
// to 4, a custom_id of 1 to 100 characters unique in the message, and a
// label of 1 to 80 characters.
func (c components) check() *formErr {
	if len(c.rows) > MaxActionRows {
		return &formErr{"BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxActionRows), []string{"components"}}
	}
	seen := map[string]bool{}
	for i, r := range c.rows {
		row := []string{"components", strconv.Itoa(i)}
		at := func(p ...string) []string { return append(append([]string(nil), row...), p...) }
		switch {
		case r.Type != ComponentActionRow:
			return &formErr{"UNION_TYPE_CHOICES", `Value of field "type" must be one of (1,).`, at("type")}
		case len(r.Components) == 0:
			return &formErr{"BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.", at("components")}
		case len(r.Components) > MaxRowComponents:
			return &formErr{"BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxRowComponents), at("components")}
		}
		for j, b := range r.Components {
			field := func(f string) []string { return at("components", strconv.Itoa(j), f) }
			switch {
			case b.Type != ComponentButton:
				return &formErr{"UNION_TYPE_CHOICES", `Value of field "type" must be one of (2,).`, field("type")}
			case b.Style < ButtonPrimary || b.Style > ButtonDanger:
				return &formErr{"UNION_TYPE_CHOICES", `Value of field "style" must be one of (1, 2, 3, 4).`, field("style")}
			case b.CustomID == "":
				return &formErr{"BASE_TYPE_REQUIRED", "This field is required", field("custom_id")}
			case utf8.RuneCountInString(b.CustomID) > MaxCustomIDLength:
				return &formErr{"BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxCustomIDLength), field("custom_id")}
			case seen[b.CustomID]:
				return &formErr{"COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated", field("custom_id")}
			case b.Label == "":
				return &formErr{"BASE_TYPE_REQUIRED", "This field is required", field("label")}
			case utf8.RuneCountInString(b.Label) > MaxButtonLabel:
				return &formErr{"BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxButtonLabel), field("label")}
			}
			seen[b.CustomID] = true
		}
	}
	return nil
}

// copyRows returns the rows as a message keeps them: never nil (Discord
// sends "components": []), not shared with the request.
func copyRows(rows []ActionRow) []ActionRow {
	out := make([]ActionRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, ActionRow{Type: r.Type, Components: append([]Component(nil), r.Components...)})
	}
	return out
}

// sentRows is Sent.Components of a request: nil when the field was absent
// or null.
func sentRows(c components) []ActionRow {
	if c.rows == nil {
		return nil
	}
	return copyRows(c.rows)
}
