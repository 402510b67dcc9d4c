package wire

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/channel"
	"github.com/clawhost/clawhost/sdk/probe"
	"github.com/clawhost/clawhost/sdk/schema"
)

// addressed is a channel with id forms whose limits come from its
// configuration; panics makes Capabilities panic while unconfigured.
type addressed struct {
	configFirst
	panics bool
}

func (a *addressed) Capabilities() channel.Capabilities {
	c := a.configFirst.Capabilities()
	if a.panics && c.MaxTextLength == 0 {
		panic("not configured")
	}
	c.IDForms = []channel.IDForm{{Pattern: `<@([0-9]+)>`, Canonical: "$1", Hint: "a mention"}}
	c.DirectToSender = true
	return c
}

// TestDescribeGivesIDFormsBeforeConfigure: the host reads a channel's id
// forms and DirectToSender at validate, from a process never configured;
// none of the limits come with them, and a Capabilities that cannot answer
// unconfigured declares nothing instead of failing Describe.
func TestDescribeGivesIDFormsBeforeConfigure(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ch := &addressed{}
	srv := newTestServer(t, &Impl{Name: "ad", Channel: ch, Configure: ch.configure})
	d, err := srv.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	c := d.GetChannel()
	if len(c.GetIdForms()) != 1 || c.GetIdForms()[0].GetCanonical() != "$1" || !c.GetDirectToSender() {
		t.Fatalf("describe before configure: %+v, want the id form and direct_to_sender", c)
	}
	if c.GetMaxTextLength() != 0 || c.GetTyping() || !d.GetChannelUnconfigured() {
		t.Errorf("describe before configure gave limits, or did not say it is unconfigured: %+v", d)
	}

	p := &addressed{panics: true}
	srv = newTestServer(t, &Impl{Name: "pa", Channel: p, Configure: p.configure})
	if d, err = srv.Describe(ctx, &pb.DescribeRequest{}); err != nil || d.GetChannel() != nil {
		t.Fatalf("describe of a channel that panics unconfigured: %+v, %v", d, err)
	}
	if _, err := srv.Configure(ctx, &pb.ConfigureRequest{Instance: "pa"}); err != nil {
		t.Fatal(err)
	}
	if d, _ = srv.Describe(ctx, &pb.DescribeRequest{}); len(d.GetChannel().GetIdForms()) != 1 || d.GetChannelUnconfigured() {
		t.Errorf("describe after configure: %+v", d.GetChannel())
	}
}

// TestProbe: the plugin's Probe gets the block, instance and data dir and
// its report comes back; an error is a business error; no Probe func is
// Unimplemented (the host reads it as "no live checks").
func TestProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var got schema.Config
	srv := newTestServer(t, &Impl{Name: "pr", Channel: &configFirst{}, Probe: func(_ context.Context, cfg schema.Config) (probe.Report, error) {
		got = cfg
		if string(cfg.JSON) == `{"bad":true}` {
			return probe.Report{}, errors.New("cannot decode")
		}
		return probe.Report{Identity: probe.Identity{ID: "42", Handle: "@bot"}, Checks: []probe.Check{{Name: "token", Verdict: probe.Fail, Found: "rejected", Do: "make a new one"}}}, nil
	}})
	r, err := srv.Probe(ctx, &pb.ProbeRequest{Instance: "pr", ConfigJson: []byte(`{"token":"x"}`), DataDir: "/d"})
	if err != nil {
		t.Fatal(err)
	}
	rep := ProbeFromProto(r)
	if rep.Identity.ID != "42" || len(rep.Checks) != 1 || rep.Checks[0].Verdict != probe.Fail || rep.Worst() != probe.Fail {
		t.Errorf("report %+v", rep)
	}
	if got.Instance != "pr" || got.DataDir != "/d" || string(got.JSON) != `{"token":"x"}` || got.Logger == nil || got.Status == nil {
		t.Errorf("probe got config %+v", got)
	}
	if r, err = srv.Probe(ctx, &pb.ProbeRequest{ConfigJson: []byte(`{"bad":true}`)}); err != nil || r.GetError().GetMessage() != "cannot decode" {
		t.Errorf("probe error: %+v, %v", r, err)
	}

	srv = newTestServer(t, &Impl{Name: "none", Channel: &configFirst{}})
	if _, err := srv.Probe(ctx, &pb.ProbeRequest{}); status.Code(err) != codes.Unimplemented {
		t.Errorf("probe without a Probe func: %v, want Unimplemented", err)
	}
}

// offering edits and reacts, and offers only reactions once configured.
type offering struct{ configFirst }

func (*offering) Edit(context.Context, channel.EditRequest) error   { return nil }
func (*offering) React(context.Context, channel.ReactRequest) error { return nil }
func (*offering) Offered() channel.Offered                          { return channel.Offered{Reactions: true} }

// TestDescribeOffered: a channel's Offerer takes back an optional
// interface it implements but cannot use as configured.
func TestDescribeOffered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ch := &offering{}
	srv := newTestServer(t, &Impl{Name: "of", Channel: ch})
	if _, err := srv.Configure(ctx, &pb.ConfigureRequest{Instance: "of"}); err != nil {
		t.Fatal(err)
	}
	d, err := srv.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := d.GetChannel(); c.GetEdit() || !c.GetReactions() {
		t.Fatalf("capabilities %+v: want reactions without edits", c)
	}
}
