package sessionreset

import (
	"github.com/clawhost/clawhost/core/internal/vectors"
	"testing"
	"time"
)

func msTime(ms *int64) time.Time {
	if ms == nil || *ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(*ms)
}

func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func TestVectorsEvaluateSessionFreshness(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "reset.evaluateSessionFreshness", func(t *testing.T, tc vectors.Case) {
		var p struct {
			UpdatedAt         *int64 `json:"updatedAt"`
			SessionStartedAt  *int64 `json:"sessionStartedAt"`
			LastInteractionAt *int64 `json:"lastInteractionAt"`
			Now               int64  `json:"now"`
			TZ                string `json:"TZ"`
			Policy            struct {
				Mode        Mode `json:"mode"`
				AtHour      int  `json:"atHour"`
				IdleMinutes int  `json:"idleMinutes"`
			} `json:"policy"`
		}
		var want struct {
			Fresh         bool   `json:"fresh"`
			DailyResetAt  int64  `json:"dailyResetAt"`
			IdleExpiresAt int64  `json:"idleExpiresAt"`
			StaleReason   string `json:"staleReason"`
		}
		tc.Decode(t, nil, &p, &want)
		loc, err := time.LoadLocation(p.TZ)
		if err != nil {
			t.Fatal(err)
		}
		got := Evaluate(Policy{Mode: p.Policy.Mode, AtHour: p.Policy.AtHour, IdleMinutes: p.Policy.IdleMinutes},
			Times{UpdatedAt: msTime(p.UpdatedAt), StartedAt: msTime(p.SessionStartedAt), LastInteractionAt: msTime(p.LastInteractionAt)},
			time.UnixMilli(p.Now), loc)
		if got.Fresh != want.Fresh || msOf(got.DailyResetAt) != want.DailyResetAt ||
			msOf(got.IdleExpiresAt) != want.IdleExpiresAt || got.StaleReason != want.StaleReason {
			t.Errorf("got %+v (daily %d idle %d), want %+v", got, msOf(got.DailyResetAt), msOf(got.IdleExpiresAt), want)
		}
	})
}

type jsRule struct {
	Mode        Mode     `json:"mode"`
	AtHour      *float64 `json:"atHour"`
	IdleMinutes *float64 `json:"idleMinutes"`
}

func (r *jsRule) rule() *Rule {
	if r == nil {
		return nil
	}
	return &Rule{Mode: r.Mode, AtHour: r.AtHour, IdleMinutes: r.IdleMinutes}
}

func TestVectorsResolveSessionResetPolicy(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "reset.resolveSessionResetPolicy", func(t *testing.T, tc vectors.Case) {
		var p struct {
			SessionCfg *struct {
				Reset       *jsRule          `json:"reset"`
				ResetByType map[Type]*jsRule `json:"resetByType"`
			} `json:"sessionCfg"`
			ResetType     Type    `json:"resetType"`
			ResetOverride *jsRule `json:"resetOverride"`
		}
		var want Policy
		var raw struct {
			Mode        Mode `json:"mode"`
			AtHour      int  `json:"atHour"`
			IdleMinutes int  `json:"idleMinutes"`
			Configured  bool `json:"configured"`
		}
		tc.Decode(t, nil, &p, &raw)
		want = Policy(raw)
		var cfg Config
		if p.SessionCfg != nil {
			cfg.Default = p.SessionCfg.Reset.rule()
			cfg.ByType = map[Type]*Rule{}
			for k, v := range p.SessionCfg.ResetByType {
				cfg.ByType[k] = v.rule()
			}
		}
		if p.ResetOverride != nil {
			cfg.ByInstance = map[string]*Rule{"tg": p.ResetOverride.rule()}
		}
		if got := Resolve(cfg, "tg", p.ResetType); got != want {
			t.Errorf("got %+v, want %+v", got, want)
		}
	})
}

func TestVectorsResolveSessionResetType(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "sessionKey.resolveSessionResetType", func(t *testing.T, tc vectors.Case) {
		var p struct {
			SessionKey string `json:"sessionKey"`
			IsGroup    bool   `json:"isGroup"`
			IsThread   bool   `json:"isThread"`
		}
		var want Type
		tc.Decode(t, nil, &p, &want)
		if got := TypeOf(p.SessionKey, p.IsGroup, p.IsThread); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestVectorsResetTriggerCommand(t *testing.T) {
	t.Parallel()
	vectors.Each(t, "reset.resetTriggerCommand", func(t *testing.T, tc vectors.Case) {
		var in string
		var p struct {
			ResetTriggers   []string `json:"resetTriggers"`
			ResetAuthorized bool     `json:"resetAuthorized"`
			Ctx             struct {
				BotUsername string `json:"BotUsername"`
			} `json:"ctx"`
		}
		var want struct {
			Triggered bool    `json:"triggered"`
			Trigger   *string `json:"trigger"`
			Payload   *string `json:"payload"`
			SoftReset bool    `json:"softReset"`
		}
		tc.Decode(t, &in, &p, &want)
		got := MatchTrigger(in, TriggerOptions{Triggers: p.ResetTriggers, Authorized: p.ResetAuthorized, BotUsername: p.Ctx.BotUsername})
		w := TriggerMatch{Triggered: want.Triggered, SoftReset: want.SoftReset}
		if want.Trigger != nil {
			w.Trigger = *want.Trigger
		}
		if want.Payload != nil {
			w.Payload = *want.Payload
		}
		if got != w {
			t.Errorf("%q: got %+v, want %+v", in, got, w)
		}
	})
}

func TestMatchTriggerEnvelope(t *testing.T) {
	t.Parallel()
	got := MatchTrigger("[Telegram Alice +2m] /new: start over", TriggerOptions{Authorized: true})
	if want := (TriggerMatch{Triggered: true, Trigger: "/new", Payload: "start over"}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
