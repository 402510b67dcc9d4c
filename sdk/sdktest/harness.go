// Package sdktest tests plugins in-process over a real gRPC connection: the
// same go-plugin glue, server shims and host client as in production, minus
// the process boundary. Conformance runs the behaviour every channel plugin
// owes the host.
package sdktest

import (
	"context"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/host"
	"github.com/clawhost/clawhost/sdk/internal/wire"
)

// Harness is a plugin served in-process and a host client connected to it.
type Harness struct {
	// Plugin is the host's client of the plugin under test.
	Plugin *host.Plugin
	// Inbox is the plugin side's inbox (for white-box checks).
	cancel context.CancelFunc
}

// Start serves p in-process and connects a host client to it. Everything is
// torn down when t ends.
func Start(t testing.TB, p sdk.Plugin) *Harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := hclog.New(&hclog.LoggerOptions{Name: p.Name, Output: hclog.DefaultOutput, Level: hclog.Warn})
	inbox := wire.NewInbox()
	srv := &wire.Server{Impl: ImplOf(p), Log: log, Ctx: ctx, Inbox: inbox}
	client, _ := plugin.TestPluginGRPCConn(t, true, map[string]plugin.Plugin{wire.PluginName: &wire.GRPCPlugin{Srv: srv}})
	raw, err := client.Dispense(wire.PluginName)
	if err != nil {
		t.Fatalf("dispense: %v", err)
	}
	h := &Harness{Plugin: host.Wrap(raw.(*grpc.ClientConn)), cancel: cancel}
	t.Cleanup(func() {
		cancel()
		inbox.Stop()
		if done := srv.RunDone(); done != nil {
			<-done
		}
		client.Close()
	})
	return h
}

// ImplOf converts an sdk.Plugin for the wire layer.
func ImplOf(p sdk.Plugin) *wire.Impl {
	return &wire.Impl{Name: p.Name, Version: p.Version, Schema: p.Schema, Validate: p.Validate, Configure: p.Configure, Channel: p.Channel, Command: p.Command, Hook: p.Hook, Retry: p.Retry}
}
