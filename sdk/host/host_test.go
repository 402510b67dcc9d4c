package host

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// TestMapErrNotSent: only a call gRPC failed before it could connect is
// marked ErrNotSent; a connection that broke during the call is not.
func TestMapErrNotSent(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg     string
		notSent bool
	}{
		{`connection error: desc = "transport: error while dialing: dial unix /tmp/plugin-dir1/plugin2: connect: connection refused"`, true},
		{"error reading from server: EOF", false},
		{"error reading from server: read unix @->/tmp/plugin: read: connection reset by peer", false},
	} {
		err := mapErr("send", grpcstatus.Error(codes.Unavailable, tc.msg))
		if !errors.Is(err, ErrPluginExited) || errors.Is(err, ErrNotSent) != tc.notSent {
			t.Errorf("%q → %v (not sent: %v, want %v)", tc.msg, err, errors.Is(err, ErrNotSent), tc.notSent)
		}
	}
}
