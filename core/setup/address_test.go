package setup

import (
	"bytes"
	"errors"
	"net"
	"strings"
	"testing"
)

// TestAddress: init writes the default address of the status page and the
// web chat only when it is free, else the next free port, and says so; an
// address given by a flag is kept, with a note when it is in use.
func TestAddress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, given string
		busy        []string
		want, said  string
	}{
		{"default free", "", nil, "127.0.0.1:8791", ""},
		{"default in use", "", []string{"127.0.0.1:8791", "127.0.0.1:8792"}, "127.0.0.1:8793", "Note: 127.0.0.1:8791 is in use (another clawhost?): the status page will be at 127.0.0.1:8793 (-admin-listen chooses another)."},
		{"all in use", "", nil, "127.0.0.1:8791", "and the 20 ports after it are in use"},
		{"given free", "127.0.0.1:9000", []string{"127.0.0.1:8791"}, "127.0.0.1:9000", ""},
		{"given in use", "127.0.0.1:9000", []string{"127.0.0.1:9000"}, "127.0.0.1:9000", "Note: 127.0.0.1:9000 is in use now; the status page will not open there while it is (-admin-listen)."},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			listen := func(network, addr string) (net.Listener, error) {
				for _, b := range c.busy {
					if addr == b {
						return nil, errors.New("address already in use")
					}
				}
				if c.name == "all in use" {
					return nil, errors.New("address already in use")
				}
				return net.Listen(network, "127.0.0.1:0")
			}
			s := &session{o: Options{Out: &out, Listen: listen}}
			if got := s.address(c.given, "127.0.0.1:8791", "the status page", "-admin-listen"); got != c.want {
				t.Errorf("address %s, want %s", got, c.want)
			}
			if c.said == "" && out.Len() > 0 || !strings.Contains(out.String(), c.said) {
				t.Errorf("said %q, want %q", out.String(), c.said)
			}
		})
	}
}
