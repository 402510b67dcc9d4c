package wire

import (
	"encoding/json"
	"fmt"
	"net"
)

// EnvReattach is the environment variable with which a host attaches to
// plugins running in debug mode (sdk/pluginclient.EnvReattach).
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
	// Secret is the secret the plugin serves with (EnvSecret), which the
	// host must send on every call; absent from the line of a plugin
	// built with an sdk older than authentication.
	Secret string `json:",omitempty"`
}

// ReattachTo is the reattach config of a plugin of process pid serving on
// addr with secret.
func ReattachTo(addr net.Addr, pid int, secret string) Reattach {
	r := Reattach{Protocol: "grpc", ProtocolVersion: ProtocolVersion, Pid: pid, Test: true, Secret: secret}
	r.Addr.Network, r.Addr.String = addr.Network(), addr.String()
	return r
}

// ReattachLine is the CLAWHOST_REATTACH value naming one instance.
func ReattachLine(instance string, r Reattach) (string, error) {
	b, err := json.Marshal(map[string]Reattach{instance: r})
	if err != nil {
		return "", fmt.Errorf("encode reattach config: %w", err)
	}
	return string(b), nil
}
