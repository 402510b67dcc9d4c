package wire

import (
	"context"
	"testing"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
)

// oneMenu shows the default command menu only (a plugin that predates
// menus per chat).
type oneMenu struct {
	configFirst
	menus []channel.MenuEntry
}

func (m *oneMenu) SetCommands(_ context.Context, cmds []channel.MenuEntry) error {
	m.menus = cmds
	return nil
}

// chatMenus shows a menu per chat too.
type chatMenus struct {
	oneMenu
	chats []channel.ChatMenu
}

func (m *chatMenus) SetChatCommands(_ context.Context, menu channel.ChatMenu) error {
	m.chats = append(m.chats, menu)
	return nil
}

// TestCommandMenuPerChat: a channel declares command_menu_per_chat only
// when it implements channel.ChatCommandMenu; a SetCommands with chat_id
// reaches SetChatCommands, one without it SetCommands; a channel without
// menus per chat refuses a scoped one instead of setting its default menu.
func TestCommandMenuPerChat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	describe := func(srv *Server) *pb.ChannelCapabilities {
		t.Helper()
		if r, err := srv.Configure(ctx, &pb.ConfigureRequest{Instance: "x"}); err != nil || len(r.GetDiagnostics()) > 0 {
			t.Fatalf("configure: %v %v", r.GetDiagnostics(), err)
		}
		d, err := srv.Describe(ctx, &pb.DescribeRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return d.GetChannel()
	}
	req := &pb.SetCommandsRequest{ChatId: "42", Commands: []*pb.CommandSpec{{Name: "deploy", Description: "ship"}}}

	old := &oneMenu{}
	srv := newTestServer(t, &Impl{Name: "old", Channel: old, Configure: old.configure})
	if c := describe(srv); !c.GetCommandMenu() || c.GetCommandMenuPerChat() {
		t.Fatalf("a channel with one menu declares %+v", c)
	}
	if r, _ := srv.SetCommands(ctx, req); r.GetError() == nil || old.menus != nil {
		t.Fatalf("a scoped menu to a channel with one menu: %v, default menu %+v", r.GetError(), old.menus)
	}

	ch := &chatMenus{}
	srv = newTestServer(t, &Impl{Name: "new", Channel: ch, Configure: ch.configure})
	if c := describe(srv); !c.GetCommandMenu() || !c.GetCommandMenuPerChat() {
		t.Fatalf("a channel with menus per chat declares %+v", c)
	}
	if r, err := srv.SetCommands(ctx, req); err != nil || r.GetError() != nil {
		t.Fatal(err, r.GetError())
	}
	if len(ch.chats) != 1 || ch.chats[0].ChatID != "42" || ch.chats[0].Commands[0] != (channel.MenuEntry{Name: "deploy", Description: "ship"}) || ch.menus != nil {
		t.Fatalf("chat menus %+v, default %+v", ch.chats, ch.menus)
	}
	if r, err := srv.SetCommands(ctx, &pb.SetCommandsRequest{Commands: req.Commands}); err != nil || r.GetError() != nil || len(ch.menus) != 1 || len(ch.chats) != 1 {
		t.Fatalf("default menu: %v %v, %+v %+v", err, r.GetError(), ch.menus, ch.chats)
	}
}
