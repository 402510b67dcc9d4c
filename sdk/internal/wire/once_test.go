package wire

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	pb "github.com/clawhost/clawhost/proto/gen/clawhost/v1"
	"github.com/clawhost/clawhost/sdk/tool"
)

// countingTool counts its calls by argument text and answers with the
// count; a call of the tool "block" waits for release.
type countingTool struct {
	n       atomic.Int32
	release chan struct{}
}

func (c *countingTool) Tools(context.Context) ([]tool.Spec, error) { return nil, nil }

func (c *countingTool) Call(ctx context.Context, req tool.CallRequest) (tool.Result, error) {
	n := c.n.Add(1)
	if req.Tool == "big" {
		return tool.Result{Text: fmt.Sprintf("call %d ", n) + strings.Repeat("x", 256<<10)}, nil
	}
	if req.Tool == "block" {
		select {
		case <-c.release:
		case <-ctx.Done():
			return tool.Result{}, ctx.Err()
		}
	}
	return tool.Result{Text: fmt.Sprintf("call %d", n)}, nil
}

// TestCallToolOnce: the server runs a tool once per idempotency key: a
// repeated key gets the first answer without a second call, a key
// repeated while its first call runs waits for it, a call without a key
// always runs, and a call stopped by its context is not remembered (the
// next call of its key runs).
func TestCallToolOnce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		keys  []string
		calls int32
		texts []string
	}{
		{"same key twice", []string{"k", "k"}, 1, []string{"call 1", "call 1"}},
		{"two keys", []string{"k1", "k2"}, 2, []string{"call 1", "call 2"}},
		{"no key", []string{"", ""}, 2, []string{"call 1", "call 2"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			impl := &countingTool{}
			srv := &Server{Impl: &Impl{Tool: impl}}
			for i, k := range c.keys {
				res, err := srv.CallTool(context.Background(), &pb.CallToolRequest{CallId: fmt.Sprint(i), IdempotencyKey: k, Tool: "t"})
				if err != nil || res.GetText() != c.texts[i] {
					t.Errorf("call %d (key %q) = %q, %v; want %q", i, k, res.GetText(), err, c.texts[i])
				}
			}
			if got := impl.n.Load(); got != c.calls {
				t.Errorf("Provider.Call ran %d times, want %d", got, c.calls)
			}
		})
	}

	t.Run("concurrent", func(t *testing.T) {
		t.Parallel()
		impl := &countingTool{release: make(chan struct{})}
		srv := &Server{Impl: &Impl{Tool: impl}}
		var wg sync.WaitGroup
		texts := make([]string, 3)
		for i := range texts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, _ := srv.CallTool(context.Background(), &pb.CallToolRequest{IdempotencyKey: "k", Tool: "block"})
				texts[i] = res.GetText()
			}()
		}
		for impl.n.Load() == 0 {
			// The first call is running; the others wait on it, not on Call.
			runtime.Gosched()
		}
		close(impl.release)
		wg.Wait()
		if impl.n.Load() != 1 || texts[0] != "call 1" || texts[1] != "call 1" || texts[2] != "call 1" {
			t.Errorf("%d calls, answers %q; want one call answered to all three", impl.n.Load(), texts)
		}
	})

	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		impl := &countingTool{}
		srv := &Server{Impl: &Impl{Tool: impl}}
		n := maxOnceBytes/(256<<10) + 2 // more 256 KiB answers than the bound holds
		for i := range n {
			_, _ = srv.CallTool(context.Background(), &pb.CallToolRequest{IdempotencyKey: fmt.Sprint("k", i), Tool: "big"})
		}
		res, _ := srv.CallTool(context.Background(), &pb.CallToolRequest{IdempotencyKey: fmt.Sprint("k", n-1), Tool: "big"})
		if !strings.HasPrefix(res.GetText(), fmt.Sprintf("call %d ", n)) {
			t.Errorf("the newest key was not remembered: %.20q", res.GetText())
		}
		res, _ = srv.CallTool(context.Background(), &pb.CallToolRequest{IdempotencyKey: "k0", Tool: "big"})
		if !strings.HasPrefix(res.GetText(), fmt.Sprintf("call %d ", n+1)) {
			t.Errorf("the oldest key was still remembered past %d bytes: %.20q", maxOnceBytes, res.GetText())
		}
	})

	t.Run("stopped", func(t *testing.T) {
		t.Parallel()
		impl := &countingTool{release: make(chan struct{})}
		srv := &Server{Impl: &Impl{Tool: impl}}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if res, _ := srv.CallTool(ctx, &pb.CallToolRequest{IdempotencyKey: "k", Tool: "block"}); res.GetError() == nil {
			t.Fatalf("a stopped call answered %q", res.GetText())
		}
		close(impl.release)
		res, err := srv.CallTool(context.Background(), &pb.CallToolRequest{IdempotencyKey: "k", Tool: "block"})
		if err != nil || res.GetText() != "call 2" {
			t.Errorf("after a stopped call: %q, %v; want the call to run again", res.GetText(), err)
		}
	})
}
