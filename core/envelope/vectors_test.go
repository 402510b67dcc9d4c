package envelope

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"testing"
	"time"
)

type envParams struct {
	Channel           string  `json:"channel"`
	From              string  `json:"from"`
	Host              string  `json:"host"`
	IP                string  `json:"ip"`
	Timestamp         float64 `json:"timestamp"`
	PreviousTimestamp float64 `json:"previousTimestamp"`
	Body              string  `json:"body"`
	ChatType          string  `json:"chatType"`
	SenderLabel       string  `json:"senderLabel"`
	FromMe            bool    `json:"fromMe"`
	Sender            *struct {
		Name     string `json:"name"`
		Username string `json:"username"`
		Tag      string `json:"tag"`
		E164     string `json:"e164"`
		ID       string `json:"id"`
	} `json:"sender"`
	Envelope *struct {
		Timezone         string `json:"timezone"`
		UserTimezone     string `json:"userTimezone"`
		IncludeTimestamp *bool  `json:"includeTimestamp"`
		IncludeElapsed   *bool  `json:"includeElapsed"`
	} `json:"envelope"`
}

func ms(f float64) time.Time {
	if f == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(f))
}

// options maps OpenClaw's envelope options; the vectors ran with TZ=UTC, so
// "local" is pinned to UTC here.
func (p envParams) options() Options {
	o := Options{Local: time.UTC}
	if e := p.Envelope; e != nil {
		o.TimeZone, o.UserTimeZone = e.Timezone, e.UserTimezone
		o.OmitTimestamp = e.IncludeTimestamp != nil && !*e.IncludeTimestamp
		o.OmitElapsed = e.IncludeElapsed != nil && !*e.IncludeElapsed
	}
	return o
}

func (p envParams) header() Header {
	return Header{Channel: p.Channel, From: p.From, Host: p.Host, IP: p.IP, Timestamp: ms(p.Timestamp), Previous: ms(p.PreviousTimestamp)}
}

func TestVectorsFormatAgentEnvelope(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "envelope.formatAgentEnvelope", func(t *testing.T, tc vectors.Case) {
		var p envParams
		var want string
		tc.Decode(t, nil, &p, &want)
		if got := FormatAgent(p.header(), p.Body, p.options()); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
}

func TestVectorsFormatInboundEnvelope(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "envelope.formatInboundEnvelope", func(t *testing.T, tc vectors.Case) {
		var p envParams
		var want string
		tc.Decode(t, nil, &p, &want)
		in := Inbound{Header: p.header(), ChatType: ChatType(p.ChatType), SenderLabel: p.SenderLabel, FromMe: p.FromMe}
		if s := p.Sender; s != nil {
			in.Sender = Sender{Name: s.Name, Username: s.Username, Tag: s.Tag, E164: s.E164, ID: s.ID}
		}
		if got := FormatInbound(in, p.Body, p.options()); got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
}

func TestVectorsFormatInboundFromLabel(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "envelope.formatInboundFromLabel", func(t *testing.T, tc vectors.Case) {
		var p struct {
			IsGroup       bool   `json:"isGroup"`
			GroupLabel    string `json:"groupLabel"`
			GroupFallback string `json:"groupFallback"`
			GroupID       string `json:"groupId"`
			DirectLabel   string `json:"directLabel"`
			DirectID      string `json:"directId"`
		}
		var want string
		tc.Decode(t, nil, &p, &want)
		got := FromLabel(FromLabelParams(p))
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}
