package pluginhost

import (
	"context"
	"sync"
	"testing"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/sdktest"
	"google.golang.org/grpc"
)

// invitingChannel is nackingChannel with AnswerInvite: it records the
// answers and fails the first failFirst of them (a homeserver that
// cannot be reached).
type invitingChannel struct {
	*nackingChannel
	amu       sync.Mutex
	failFirst int
	answers   []*pb.AnswerInviteRequest
}

func (f *invitingChannel) AnswerInvite(_ context.Context, req *pb.AnswerInviteRequest) (*pb.AnswerInviteResponse, error) {
	f.amu.Lock()
	defer f.amu.Unlock()
	if f.failFirst > 0 {
		f.failFirst--
		return &pb.AnswerInviteResponse{Error: &pb.PluginError{Code: string(channel.CodeUnavailable), Message: "homeserver unreachable"}}, nil
	}
	f.answers = append(f.answers, req)
	return &pb.AnswerInviteResponse{}, nil
}

func (f *invitingChannel) answered() []*pb.AnswerInviteRequest {
	f.amu.Lock()
	defer f.amu.Unlock()
	return append([]*pb.AnswerInviteRequest(nil), f.answers...)
}

// TestPumpAnswersInvites: an invite in a batch is decided and answered to
// the plugin before the ack, never stored as a message; an answer the
// plugin could not carry out nacks the batch, and the redelivered invite
// is answered then (nothing lost), the message beside it stored once.
func TestPumpAnswersInvites(t *testing.T) {
	t.Parallel()
	fc := &invitingChannel{nackingChannel: &nackingChannel{legacyChannel: newLegacyChannel()}, failFirst: 1}
	var decided []string
	var dmu sync.Mutex
	store := &flakyStore{stored: map[string]int{}, decide: func(_ context.Context, instance string, in channel.InboundMessage) (bool, string) {
		dmu.Lock()
		decided = append(decided, instance+" "+in.Sender.ID)
		dmu.Unlock()
		return in.Invite.IsDirect, "because"
	}}
	fc.mu.Lock()
	for _, m := range []*pb.InboundMessage{
		{DeliveryId: 1, ChatType: "direct", ChatId: "!dm", MessageId: "invite:!dm", Sender: &pb.Sender{Id: "@eve:hs"}, Invite: &pb.Invite{IsDirect: true}},
		{DeliveryId: 2, ChatType: "direct", ChatId: "c", MessageId: "m2", Sender: &pb.Sender{Id: "u"}, Text: "hi"},
		{DeliveryId: 3, ChatType: "group", ChatId: "!group", MessageId: "invite:!group", Sender: &pb.Sender{Id: "@eve:hs"}, Invite: &pb.Invite{}},
	} {
		fc.unacked[m.DeliveryId] = m
	}
	fc.mu.Unlock()
	runPump(t, func(s *grpc.Server) { pb.RegisterChannelServiceServer(s, fc) }, store)
	waitStored(t, store, "m2")
	sdktest.WaitFor(t, "everything acked", func() bool {
		fc.mu.Lock()
		defer fc.mu.Unlock()
		return len(fc.unacked) == 0
	})
	got := fc.answered()
	if len(got) != 2 || got[0].GetChatId() != "!dm" || !got[0].GetJoin() || got[1].GetChatId() != "!group" || got[1].GetJoin() || got[1].GetReason() != "because" {
		t.Fatalf("answers %v; want !dm joined, !group declined because", got)
	}
	if n := len(fc.nacks); n != 1 {
		t.Errorf("%d nacks; want 1 (the failed answer)", n)
	}
	for _, id := range []string{"invite:!dm", "invite:!group"} {
		if n := store.count(id); n != 0 {
			t.Errorf("%s stored as a message %d times", id, n)
		}
	}
	if n := store.count("m2"); n != 1 {
		t.Errorf("m2 stored %d times", n)
	}
	dmu.Lock()
	defer dmu.Unlock()
	if len(decided) != 3 || decided[0] != "fake @eve:hs" {
		t.Errorf("decided %v; want the !dm invite twice (failed answer, redelivery) and !group once", decided)
	}
}
