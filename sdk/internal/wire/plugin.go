package wire

// SDKVersion is reported in Describe.
const SDKVersion = "0.1.0"

// PluginName is the single go-plugin name every clawhost plugin serves; the
// kinds are discovered through Describe.
const PluginName = "clawhost"

// The go-plugin handshake (sdk/pluginclient.Handshake). The magic cookie never
// changes; the protocol version is the proto package's major (clawhost.v1).
const (
	ProtocolVersion  = 1
	MagicCookieKey   = "CLAWHOST_PLUGIN"
	MagicCookieValue = "3f1c9a2e-clawhost-plugin-v1-b8d4e6f0"
)

// MaxMessageBytes is the gRPC message size limit on both sides.
const MaxMessageBytes = 16 << 20

// WindowBytes is the HTTP/2 flow-control window, per stream and per
// connection, on both sides. Set, it turns off gRPC's bandwidth
// estimation, which answers received data with PING frames (a frame each
// way more per call on a socket whose bandwidth never changes); 1 MiB
// keeps media chunks (256 KiB) flowing without waiting for window updates.
const WindowBytes = 1 << 20
