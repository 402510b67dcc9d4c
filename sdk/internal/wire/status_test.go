package wire

import (
	"testing"

	"github.com/clawhost/clawhost/sdk/status"
)

func TestStatusWakesOnChangeOnly(t *testing.T) {
	t.Parallel()
	var s Status
	st, ch := s.current()
	if st.State != status.Ready {
		t.Fatalf("zero status = %q, want ready", st.State)
	}
	s.Report(status.Status{State: status.Ready})
	select {
	case <-ch:
		t.Fatal("an identical report woke the watcher")
	default:
	}
	a := &status.Attention{Kind: status.QR, Data: "2@abc", Retry: "Show a new QR code"}
	s.Report(status.Status{State: status.NeedsAttention, Message: "scan the code", Attention: a})
	select {
	case <-ch:
	default:
		t.Fatal("a change did not wake the watcher")
	}
	a.Data = "changed by the caller after Report"
	st, ch = s.current()
	if st.State != status.NeedsAttention || st.Attention.Data != "2@abc" {
		t.Fatalf("status = %+v, want needs_attention with the reported data", st)
	}
	s.Report(status.Status{State: status.NeedsAttention, Message: "scan the code", Attention: &status.Attention{Kind: status.QR, Data: "2@def", Retry: "Show a new QR code"}})
	select {
	case <-ch:
	default:
		t.Fatal("a rotated QR did not wake the watcher")
	}
}

func TestStatusRoundTrip(t *testing.T) {
	t.Parallel()
	in := status.Status{State: status.NeedsAttention, Message: "m", Attention: &status.Attention{Kind: status.Code, Data: "ABCD-EFGH", Retry: "r"}}
	out := StatusFromProto(StatusToProto(in))
	if out.State != in.State || out.Message != in.Message || *out.Attention != *in.Attention {
		t.Fatalf("round trip: %+v → %+v", in, out)
	}
	if got := StatusFromProto(StatusToProto(status.Status{})); got.State != status.Ready {
		t.Fatalf("empty state = %q, want ready", got.State)
	}
}
