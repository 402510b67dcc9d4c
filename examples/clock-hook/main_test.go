package main

import (
	"context"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/hook"
	"github.com/clawhost/clawhost/sdk/schema"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestClock(t *testing.T) {
	fixed := time.Date(2026, 11, 21, 13, 4, 5, 0, time.UTC)
	h := sdktest.Start(t, plugin(func() time.Time { return fixed })).Configure(t, schema.Config{Instance: "clock", JSON: []byte(`{"timezone":"Europe/Berlin"}`)})
	ctx := context.Background()
	res, err := h.Plugin.BeforeAgentStart(ctx, hook.Request{Message: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Current date and time: Saturday 2026-11-21 14:04:05 CET"; res.PrependContext != want {
		t.Errorf("got %q, want %q", res.PrependContext, want)
	}
}

func TestClockBadZone(t *testing.T) {
	h := sdktest.Start(t, plugin(time.Now))
	diags, err := h.Plugin.Configure(context.Background(), schema.Config{Instance: "clock", JSON: []byte(`{"timezone":"Mars/Base"}`)})
	if err != nil || len(diags) != 1 || diags[0].Attribute != "timezone" {
		t.Fatalf("want one diagnostic on timezone, got %v %v", diags, err)
	}
}

// TestClockValidate: Validate holds the same check as Configure, without
// configuring (a valid block is configured afterwards).
func TestClockValidate(t *testing.T) {
	h := sdktest.Start(t, plugin(time.Now))
	ctx := context.Background()
	for _, tc := range []struct {
		zone string
		bad  bool
	}{{"Mars/Base", true}, {"Europe/Berlin", false}, {"UTC", false}} {
		diags, err := h.Plugin.Validate(ctx, schema.Config{Instance: "clock", JSON: []byte(`{"timezone":"` + tc.zone + `"}`)})
		if err != nil || (len(diags) == 1 && diags[0].Attribute == "timezone") != tc.bad || (!tc.bad && len(diags) > 0) {
			t.Errorf("validate %q: %v %v", tc.zone, diags, err)
		}
	}
	h.Configure(t, schema.Config{Instance: "clock", JSON: []byte(`{"timezone":"UTC"}`)})
}

// TestTurnDetails: the workspace, session id and attachments the host puts
// in the request cross the gRPC boundary and reach the hook.
func TestTurnDetails(t *testing.T) {
	fixed := time.Date(2026, 11, 21, 13, 4, 5, 0, time.UTC)
	h := sdktest.Start(t, plugin(func() time.Time { return fixed })).Configure(t, schema.Config{Instance: "clock", JSON: []byte(`{"timezone":"UTC","turn_details":true}`)})
	ctx := context.Background()
	res, err := h.Plugin.BeforeAgentStart(ctx, hook.Request{Message: "look", NewSession: true, Workspace: "/srv/ws", SessionID: "0b6c3a52-5f7e-4d1c-9a55-0f3f6a1c2b7d",
		Attachments: []hook.Attachment{{Kind: channel.MediaImage, Path: "/srv/ws/media/tg/7-0.png", MIME: "image/png", Filename: "cat.png", Size: 1234}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "Current date and time: Saturday 2026-11-21 13:04:05 UTC\n" +
		"Session: 0b6c3a52-5f7e-4d1c-9a55-0f3f6a1c2b7d (new)\nWorkspace: /srv/ws\nAttachments: 1\n" +
		"- image /srv/ws/media/tg/7-0.png (image/png, \"cat.png\", 1234 bytes)"
	if res.PrependContext != want {
		t.Errorf("got\n%s\nwant\n%s", res.PrependContext, want)
	}
}
