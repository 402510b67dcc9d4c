package wire

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/schema"
)

// configFirst is a channel whose capabilities exist only once it is
// configured, as a third-party channel's may: it records every call of
// Capabilities and whether it came before Configure.
type configFirst struct {
	mu         sync.Mutex
	configured bool
	calls      int
	early      int // calls before Configure
	limit      int
}

var _ channel.Typer = (*configFirst)(nil)

func (c *configFirst) configure(_ context.Context, _ schema.Config) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.configured, c.limit = true, 321
	return nil
}

func (c *configFirst) Capabilities() channel.Capabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	if !c.configured {
		c.early++
	}
	return channel.Capabilities{MaxTextLength: c.limit}
}

func (c *configFirst) counts() (calls, early int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.early
}

func (c *configFirst) Run(ctx context.Context, _ channel.Inbox) error { <-ctx.Done(); return nil }

func (c *configFirst) Send(context.Context, channel.SendRequest) (channel.SendResponse, error) {
	return channel.SendResponse{}, nil
}

func (c *configFirst) SetTyping(context.Context, channel.TypingRequest) error { return nil }

func newTestServer(t *testing.T, impl *Impl) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv := &Server{Impl: impl, Log: hclog.NewNullLogger(), Ctx: ctx, Inbox: NewInbox()}
	t.Cleanup(func() {
		cancel()
		if done := srv.RunDone(); done != nil {
			<-done
		}
	})
	return srv
}

// TestDescribeBeforeConfigure: before Configure, Describe names the plugin
// and its kinds and none of the channel's limits, which may depend on its
// configuration (a host standing by for the channel's lease describes it
// then): it asks the channel once, for its id forms (addressing_test.go);
// after Configure it gives them.
func TestDescribeBeforeConfigure(t *testing.T) {
	t.Parallel()
	ch := &configFirst{}
	srv := newTestServer(t, &Impl{Name: "cf", Version: "1.2.3", Channel: ch, Configure: ch.configure})
	ctx := context.Background()

	d, err := srv.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if d.GetName() != "cf" || d.GetVersion() != "1.2.3" || d.GetSdkVersion() != SDKVersion || len(d.GetKinds()) != 1 || d.GetKinds()[0] != pb.Kind_KIND_CHANNEL {
		t.Fatalf("describe before configure: %+v", d)
	}
	if d.GetChannel() != nil {
		t.Errorf("describe before configure gave capabilities: %+v", d.GetChannel())
	}
	if d2, _ := srv.Describe(ctx, &pb.DescribeRequest{}); d2.GetChannel() != nil {
		t.Errorf("second describe before configure gave capabilities: %+v", d2.GetChannel())
	}
	if calls, _ := ch.counts(); calls != 1 {
		t.Fatalf("Capabilities called %d times before Configure, want once", calls)
	}

	if r, err := srv.Configure(ctx, &pb.ConfigureRequest{Instance: "cf"}); err != nil || len(r.GetDiagnostics()) > 0 {
		t.Fatalf("configure: %v %v", r.GetDiagnostics(), err)
	}
	d, err = srv.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.GetChannel(); c == nil || c.GetMaxTextLength() != 321 || !c.GetTyping() || c.GetEdit() {
		t.Fatalf("describe after configure: capabilities %+v, want max 321, typing, no edit", d.GetChannel())
	}
	if calls, early := ch.counts(); calls != 2 || early != 1 {
		t.Errorf("Capabilities called %d times, %d before Configure; want once before, once after", calls, early)
	}
}

// TestDescribeDuringConfigure: a Configure that takes its time (a login to
// the platform) does not hold up Describe, which the host's liveness probe
// calls meanwhile; it answers as before Configure.
func TestDescribeDuringConfigure(t *testing.T) {
	t.Parallel()
	ch := &configFirst{}
	entered, proceed := make(chan struct{}), make(chan struct{})
	srv := newTestServer(t, &Impl{Name: "slow", Channel: ch, Configure: func(ctx context.Context, cfg schema.Config) error {
		close(entered)
		<-proceed
		return ch.configure(ctx, cfg)
	}})
	configured := make(chan error, 1)
	go func() {
		_, err := srv.Configure(context.Background(), &pb.ConfigureRequest{Instance: "slow"})
		configured <- err
	}()
	<-entered
	described := make(chan *pb.DescribeResponse, 1)
	go func() {
		d, _ := srv.Describe(context.Background(), &pb.DescribeRequest{})
		described <- d
	}()
	select {
	case d := <-described:
		if d.GetName() != "slow" || d.GetChannel() != nil {
			t.Errorf("describe during configure: %+v", d)
		}
	case <-time.After(10 * time.Second): // a deadlock guard, not a clock
		t.Fatal("Describe waited for Configure")
	}
	close(proceed)
	if err := <-configured; err != nil {
		t.Fatal(err)
	}
	if calls, _ := ch.counts(); calls != 0 {
		t.Errorf("Capabilities called %d times before Configure returned", calls)
	}
}
