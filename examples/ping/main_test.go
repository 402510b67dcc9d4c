package main

import (
	"context"
	"testing"

	"github.com/clawhost/clawhost/sdk/command"
	"github.com/clawhost/clawhost/sdk/sdktest"
)

func TestPing(t *testing.T) {
	h := sdktest.Start(t, plugin())
	ctx := context.Background()
	specs, err := h.Plugin.ListCommands(ctx)
	if err != nil || len(specs) != 1 || specs[0].Name != "ping" {
		t.Fatalf("list: %v %v", specs, err)
	}
	for _, tc := range []struct{ args, want string }{{"", "pong"}, {"hi there", "pong hi there"}} {
		res, err := h.Plugin.Execute(ctx, command.Request{Command: "ping", Args: tc.args})
		if err != nil || len(res.Replies) != 1 || res.Replies[0].Text != tc.want {
			t.Errorf("execute %q: %+v %v, want %q", tc.args, res, err, tc.want)
		}
	}
}
