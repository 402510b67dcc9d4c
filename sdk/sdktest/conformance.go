package sdktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk"
	"github.com/clawhost/clawhost/sdk/conformance"
)

// ConformanceConfig tells Conformance how to drive a channel plugin and the
// platform (or platform fake) behind it.
type ConformanceConfig struct {
	// New returns a fresh plugin; called once per sub-test.
	New func(t *testing.T) sdk.Plugin
	// Config is the JSON of the config {} block passed to Configure.
	Config []byte
	// Inject makes the platform produce one inbound message with the given
	// text (e.g. push an update into a fake Bot API) and returns the chat id
	// it will arrive in.
	//
	// Blocking rules: Inject is called on the check's goroutine while the
	// host side is receiving, but the check reads the message and acks it
	// only after Inject returned (some checks never ack). Inject must
	// therefore return once the platform has the message, without waiting
	// for the plugin to deliver it or for the host to store it: a platform
	// call that answers only after the ack (the loopback example's POST
	// /inbound) has to run on a goroutine of its own. Inject may call
	// t.Fatal; it is never called concurrently.
	Inject func(t *testing.T, text string) (chatID string)
	// UnknownChatID is a chat id the platform does not know; Send to it
	// must fail with channel.CodeChatNotFound. Empty means
	// conformance.DefaultUnknownChatID.
	UnknownChatID string
	// Timeout bounds each step; zero means 10s.
	Timeout time.Duration
}

// Conformance runs the behaviour every channel plugin owes the host
// (conformance.ChannelChecks), each check as a sub-test: describe/schema
// sanity, configure, inbound delivery with host acks, redelivery of unacked
// messages on a new stream and after a Nack, sends up to the declared text
// limit, multi-byte text at that limit in its unit, chat_not_found for an
// unknown chat, typed errors for optional capabilities it lacks, and a
// well-formed report from its live checks (conformance.ProbeCheck). `clawhost plugin test` runs the same checks against a
// plugin binary.
func Conformance(t *testing.T, cc ConformanceConfig) {
	for _, c := range append(conformance.ChannelChecks(), conformance.ProbeCheck()) {
		t.Run(c.Name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			note, err := c.Run(ctx, inProcess(t, cc))
			switch {
			case errors.Is(err, conformance.ErrSkipped):
				t.Skip(err)
			case err != nil:
				t.Fatal(err)
			case note != "":
				t.Log(note)
			}
		})
	}
}

// inProcess is the conformance target of one sub-test: plugins served
// in-process by Start, torn down when t ends.
func inProcess(t *testing.T, cc ConformanceConfig) conformance.Target {
	return conformance.Target{
		Start: func(ctx context.Context) (conformance.Instance, error) {
			// The data dir is made before Start so that cleanup (LIFO) stops
			// the plugin before its directory is removed.
			dataDir := t.TempDir()
			h := Start(t, cc.New(t))
			return conformance.Instance{Plugin: h.Plugin, DataDir: dataDir}, nil
		},
		Config:        cc.Config,
		UnknownChatID: cc.UnknownChatID,
		Inject: func(ctx context.Context, _ conformance.Instance, text string) (string, error) {
			return cc.Inject(t, text), nil
		},
		Timeout: cc.Timeout,
	}
}
