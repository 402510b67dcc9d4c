package wire

import (
	"encoding/json"
	"fmt"
	"net"

	"github.com/hashicorp/go-plugin"
)

// EnvReattach is the environment variable with which a host attaches to
// plugins running in debug mode (sdk/host.EnvReattach).
const EnvReattach = "CLAWHOST_REATTACH"

// Reattach is the JSON form of a go-plugin reattach config, the value of
// one instance in CLAWHOST_REATTACH. The field names are Terraform's
// (TF_REATTACH_PROVIDERS), so the shape is familiar.
type Reattach struct {
	Protocol        string
	ProtocolVersion int
	Pid             int
	Test            bool
	Addr            struct{ Network, String string }
}

// ReattachOf is the JSON form of rc.
func ReattachOf(rc *plugin.ReattachConfig) Reattach {
	r := Reattach{Protocol: string(rc.Protocol), ProtocolVersion: rc.ProtocolVersion, Pid: rc.Pid, Test: rc.Test}
	r.Addr.Network, r.Addr.String = rc.Addr.Network(), rc.Addr.String()
	return r
}

// Config turns r back into a go-plugin reattach config. Test is always
// set: the host never kills a process it did not start.
func (r Reattach) Config() (*plugin.ReattachConfig, error) {
	var addr net.Addr
	switch r.Addr.Network {
	case "unix":
		addr = &net.UnixAddr{Net: "unix", Name: r.Addr.String}
	case "tcp":
		a, err := net.ResolveTCPAddr("tcp", r.Addr.String)
		if err != nil {
			return nil, fmt.Errorf("reattach address %q: %w", r.Addr.String, err)
		}
		addr = a
	default:
		return nil, fmt.Errorf("reattach address: network %q is not unix or tcp", r.Addr.Network)
	}
	if r.Protocol != string(plugin.ProtocolGRPC) {
		return nil, fmt.Errorf("reattach protocol %q: clawhost plugins speak %q", r.Protocol, plugin.ProtocolGRPC)
	}
	if r.Pid <= 0 {
		return nil, fmt.Errorf("reattach: no pid")
	}
	return &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: r.ProtocolVersion, Addr: addr, Pid: r.Pid, Test: true}, nil
}

// ReattachLine is the CLAWHOST_REATTACH value naming one instance.
func ReattachLine(instance string, rc *plugin.ReattachConfig) (string, error) {
	b, err := json.Marshal(map[string]Reattach{instance: ReattachOf(rc)})
	if err != nil {
		return "", fmt.Errorf("encode reattach config: %w", err)
	}
	return string(b), nil
}
