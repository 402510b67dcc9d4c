package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/clawhost/clawhost/core/gateway"
	"github.com/clawhost/clawhost/core/store"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/pluginclient"
)

// relayPorts are the pipeline's ports with the calls to channel
// instances another host holds relayed to it.
type relayPorts struct {
	gateway.Ports
	r *relay
}

// Ready implements delivery.Channels.
func (p relayPorts) Ready(instance string) (pluginclient.Description, bool) {
	if !p.r.gate.remote(instance) {
		return p.Ports.Ready(instance)
	}
	_, d, ok := p.r.gate.holder(instance)
	return d, ok
}

// WaitReady implements delivery.Channels: for a remote channel, until a
// live host holds it and published its description.
func (p relayPorts) WaitReady(ctx context.Context, instance string) (pluginclient.Description, error) {
	for {
		if !p.r.gate.remote(instance) {
			return p.Ports.WaitReady(ctx, instance)
		}
		if _, d, ok := p.r.gate.holder(instance); ok {
			return d, nil
		}
		select {
		case <-ctx.Done():
			return pluginclient.Description{}, fmt.Errorf("channel %s: no host serves it now: %w", instance, ctx.Err())
		case <-p.r.clock.After(100 * time.Millisecond):
		}
	}
}

// sendCall is a relayed Send; media files travel in it (the holder may
// not see this host's files).
type sendCall struct {
	Request channel.SendRequest `json:"request"`
	Files   [][]byte            `json:"files,omitempty"`
}

// Send implements delivery.Channels.
func (p relayPorts) Send(ctx context.Context, instance string, req channel.SendRequest) (channel.SendResponse, error) {
	if !p.r.gate.remote(instance) {
		return p.Ports.Send(ctx, instance, req)
	}
	if _, err := p.WaitReady(ctx, instance); err != nil {
		return channel.SendResponse{}, err
	}
	call := sendCall{Request: req}
	for _, m := range req.Media {
		b, err := readBounded(m.Path)
		if err != nil {
			return channel.SendResponse{}, &channel.Error{Code: channel.CodeInvalidRequest, Message: fmt.Sprintf("media %s: %v", filepath.Base(m.Path), err)}
		}
		call.Files = append(call.Files, b)
	}
	var resp channel.SendResponse
	err := p.r.call(ctx, instance, "send", call, &resp)
	return resp, err
}

// relayed runs a call that does not wait for the channel: here (local) when
// this host holds instance's channel, else on the holder (remote); not sent
// when no host serves the channel now.
func (p relayPorts) relayed(instance string, local, remote func() error) error {
	if !p.r.gate.remote(instance) {
		return local()
	}
	if _, ok := p.Ready(instance); !ok {
		return pluginclient.ErrNotSent
	}
	return remote()
}

// Edit implements delivery.Channels.
func (p relayPorts) Edit(ctx context.Context, instance string, req channel.EditRequest) error {
	return p.relayed(instance, func() error { return p.Ports.Edit(ctx, instance, req) }, func() error {
		return p.r.call(ctx, instance, "edit", req, nil)
	})
}

// React implements delivery.Channels: a reaction (the seen 👀, the
// agent's react tool) is set by the host that holds the channel.
func (p relayPorts) React(ctx context.Context, instance string, req channel.ReactRequest) error {
	return p.relayed(instance, func() error { return p.Ports.React(ctx, instance, req) }, func() error {
		return p.r.call(ctx, instance, "react", req, nil)
	})
}

// SetTyping implements delivery.Channels: relayed without waiting.
func (p relayPorts) SetTyping(ctx context.Context, instance string, req channel.TypingRequest) error {
	return p.relayed(instance, func() error { return p.Ports.SetTyping(ctx, instance, req) }, func() error {
		b, _ := json.Marshal(req)
		_, err := p.r.db.Relay(ctx, store.RelayCall{Instance: instance, Op: "typing", Request: b, NoReply: true})
		return err
	})
}

// hookCall is a relayed BeforeAgentStart.
type hookCall struct {
	Request hook.Request  `json:"request"`
	Timeout time.Duration `json:"timeout"`
}

// BeforeAgentStart implements turn.Hooks: a hook offered by a channel
// plugin another host runs is called there.
func (p relayPorts) BeforeAgentStart(ctx context.Context, instance string, req hook.Request, timeout time.Duration) (hook.Response, bool, error) {
	if !p.r.gate.remote(instance) {
		return p.Ports.BeforeAgentStart(ctx, instance, req, timeout)
	}
	d, ok := p.Ready(instance)
	if !ok {
		return hook.Response{}, false, fmt.Errorf("hook %s: no host serves this channel now", instance)
	}
	if !d.Hook {
		return hook.Response{}, false, nil
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var resp hook.Response
	err := p.r.call(cctx, instance, "hook", hookCall{Request: req, Timeout: timeout}, &resp)
	return resp, err == nil, err
}

// downloadCall and downloaded are a relayed Download. Entry is the
// journal entry whose message carries Ref: the holder downloads only a
// ref that entry of that instance holds (see checkDownload).
type downloadCall struct {
	Entry    int64  `json:"entry"`
	Ref      string `json:"ref"`
	MaxBytes int64  `json:"max_bytes"`
}

type downloaded struct {
	Info channel.MediaInfo `json:"info"`
	Data []byte            `json:"data"`
}

// Download implements delivery.Channels and turn.Channels.
func (p relayPorts) Download(ctx context.Context, instance string, entry int64, ref string, maxBytes int64, w io.Writer) (channel.MediaInfo, error) {
	if !p.r.gate.remote(instance) {
		return p.Ports.Download(ctx, instance, entry, ref, maxBytes, w)
	}
	if _, err := p.WaitReady(ctx, instance); err != nil {
		return channel.MediaInfo{}, err
	}
	var out downloaded
	if err := p.r.call(ctx, instance, "download", downloadCall{Entry: entry, Ref: ref, MaxBytes: min(maxBytes, maxRelayedMedia)}, &out); err != nil {
		return channel.MediaInfo{}, err
	}
	_, err := w.Write(out.Data)
	return out.Info, err
}

func readBounded(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxRelayedMedia {
		return nil, fmt.Errorf("%d bytes: larger than the %d a relayed file may have", st.Size(), maxRelayedMedia)
	}
	return os.ReadFile(path)
}
