package pluginclient

import (
	"context"
	"fmt"
	"io"
	"time"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/internal/wire"
)

// Delivery is one inbound message and its delivery id for Ack.
type Delivery struct {
	ID      uint64
	Message channel.InboundMessage
}

// Stream is an open Receive stream.
type Stream struct {
	// C yields deliveries; it is closed when the stream ends.
	C   <-chan Delivery
	err error
	end chan struct{}
}

// Err returns why the stream ended; call it after C is closed.
func (s *Stream) Err() error {
	<-s.end
	return s.err
}

// Receive opens the inbound stream. It ends when ctx ends or the plugin
// exits. buffer is the channel's capacity.
func (p *Plugin) Receive(ctx context.Context, buffer int) (*Stream, error) {
	rs, err := p.ch.Receive(ctx, &pb.ReceiveRequest{})
	if err != nil {
		return nil, mapErr("receive", err)
	}
	c := make(chan Delivery, buffer)
	s := &Stream{C: c, end: make(chan struct{})}
	go func() {
		defer close(s.end)
		defer close(c)
		for {
			m, err := rs.Recv()
			if err != nil {
				if err == io.EOF {
					err = fmt.Errorf("receive: %w: stream closed", ErrPluginExited)
				} else {
					err = mapErr("receive", err)
				}
				s.err = err
				return
			}
			select {
			case c <- Delivery{ID: m.GetDeliveryId(), Message: wire.InboundFromProto(m)}:
			case <-ctx.Done():
				s.err = ctx.Err()
				return
			}
		}
	}()
	return s, nil
}

// Ack confirms durable storage of deliveries.
func (p *Plugin) Ack(ctx context.Context, ids ...uint64) error {
	req := &pb.AckRequest{DeliveryIds: ids}
	if _, err := p.calls.do(ctx, "ack", &pb.Call{Op: &pb.Call_Ack{Ack: req}}); err != errUnary {
		return err
	}
	_, err := p.ch.Ack(ctx, req)
	return mapErr("ack", err)
}

// Nack tells the plugin that the host could not store deliveries: the
// plugin keeps them and sends them again on the open stream, sending
// nothing before retryAfter. reason is for the plugin's log. A plugin built
// before Nack existed answers ErrUnimplemented; the caller then ends the
// stream and opens a new one after retryAfter, on which the plugin
// redelivers everything it has not seen acked.
func (p *Plugin) Nack(ctx context.Context, reason string, retryAfter time.Duration, ids ...uint64) error {
	_, err := p.ch.Nack(ctx, &pb.NackRequest{DeliveryIds: ids, Reason: reason, RetryAfterMs: retryAfter.Milliseconds()})
	return mapErr("nack", err)
}

// Send posts a message. A business failure is a *channel.Error.
func (p *Plugin) Send(ctx context.Context, req channel.SendRequest) (channel.SendResponse, error) {
	preq := wire.SendToProto(req)
	var r *pb.SendResponse
	if res, err := p.calls.do(ctx, "send", &pb.Call{Op: &pb.Call_Send{Send: preq}}); err != errUnary {
		if err != nil {
			return channel.SendResponse{}, err
		}
		if r = res.GetSend(); r == nil {
			return channel.SendResponse{}, errNoResult("send")
		}
	} else if r, err = p.ch.Send(ctx, preq); err != nil {
		return channel.SendResponse{}, mapErr("send", err)
	}
	if e := r.GetError(); e != nil {
		return channel.SendResponse{}, wire.ErrorFromProto(e)
	}
	return channel.SendResponse{MessageIDs: r.GetMessageIds()}, nil
}

// SetTyping shows or clears the typing indicator.
func (p *Plugin) SetTyping(ctx context.Context, req channel.TypingRequest) error {
	preq := &pb.SetTypingRequest{ChatId: req.ChatID, ThreadId: req.ThreadID, On: req.On}
	if res, err := p.calls.do(ctx, "set typing", &pb.Call{Op: &pb.Call_SetTyping{SetTyping: preq}}); err != errUnary {
		if err != nil {
			return err
		}
		if res.GetSetTyping() == nil {
			return errNoResult("set typing")
		}
		return wire.ErrorFromProto(res.GetSetTyping().GetError())
	}
	r, err := p.ch.SetTyping(ctx, preq)
	if err != nil {
		return mapErr("set typing", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// Edit replaces the text of a sent message.
func (p *Plugin) Edit(ctx context.Context, req channel.EditRequest) error {
	preq := wire.EditToProto(req)
	if res, err := p.calls.do(ctx, "edit", &pb.Call{Op: &pb.Call_Edit{Edit: preq}}); err != errUnary {
		if err != nil {
			return err
		}
		if res.GetEdit() == nil {
			return errNoResult("edit")
		}
		return wire.ErrorFromProto(res.GetEdit().GetError())
	}
	r, err := p.ch.Edit(ctx, preq)
	if err != nil {
		return mapErr("edit", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// React adds or removes a reaction.
func (p *Plugin) React(ctx context.Context, req channel.ReactRequest) error {
	preq := &pb.ReactRequest{ChatId: req.ChatID, ThreadId: req.ThreadID, MessageId: req.MessageID, Emoji: req.Emoji, Remove: req.Remove}
	if res, err := p.calls.do(ctx, "react", &pb.Call{Op: &pb.Call_React{React: preq}}); err != errUnary {
		if err != nil {
			return err
		}
		if res.GetReact() == nil {
			return errNoResult("react")
		}
		return wire.ErrorFromProto(res.GetReact().GetError())
	}
	r, err := p.ch.React(ctx, preq)
	if err != nil {
		return mapErr("react", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// SetChatCommands publishes one chat's command menu (ChatID "": the
// default menu); only for a plugin that declares it
// (Description.CommandMenuPerChat).
func (p *Plugin) SetChatCommands(ctx context.Context, menu channel.ChatMenu) error {
	r, err := p.ch.SetCommands(ctx, wire.ChatMenuToProto(menu))
	if err != nil {
		return mapErr("set commands", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// SetCommands publishes the command menu.
func (p *Plugin) SetCommands(ctx context.Context, cmds []command.Spec) error {
	r, err := p.ch.SetCommands(ctx, &pb.SetCommandsRequest{Commands: wire.SpecsToProto(cmds)})
	if err != nil {
		return mapErr("set commands", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// AnswerInvite joins (join) or declines the invitation of the bot to
// chatID (Description.Invites). A business failure is a *channel.Error.
func (p *Plugin) AnswerInvite(ctx context.Context, chatID string, join bool, reason string) error {
	r, err := p.ch.AnswerInvite(ctx, &pb.AnswerInviteRequest{ChatId: chatID, Join: join, Reason: reason})
	if err != nil {
		return mapErr("answer invite", err)
	}
	return wire.ErrorFromProto(r.GetError())
}

// DownloadMedia copies the bytes of an inbound media item to w and returns
// their info. maxBytes > 0 bounds the size.
func (p *Plugin) DownloadMedia(ctx context.Context, ref string, maxBytes int64, w io.Writer) (channel.MediaInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := p.ch.DownloadMedia(ctx, &pb.DownloadMediaRequest{Ref: ref, MaxBytes: maxBytes})
	if err != nil {
		return channel.MediaInfo{}, mapErr("download media", err)
	}
	var info channel.MediaInfo
	first := true
	var n int64
	for {
		c, err := s.Recv()
		if err == io.EOF {
			info.Size = n
			return info, nil
		}
		if err != nil {
			return info, mapErr("download media", err)
		}
		if e := c.GetError(); e != nil {
			return info, wire.ErrorFromProto(e)
		}
		if first {
			info.MIME, first = c.GetMime(), false
		}
		n += int64(len(c.GetData()))
		if maxBytes > 0 && n > maxBytes {
			return info, channel.Errorf(channel.CodeMessageTooLong, "media is larger than %d bytes", maxBytes)
		}
		if _, err := w.Write(c.GetData()); err != nil {
			return info, fmt.Errorf("download media: write: %w", err)
		}
	}
}
