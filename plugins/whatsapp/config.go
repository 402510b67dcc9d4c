package whatsapp

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"sort"
	"strings"
	"time"
	"unicode"

	"go.mau.fi/whatsmeow/store"

	"github.com/clawhost/clawhost/sdk/schema"
)

// Defaults and limits of the config {} block.
const (
	// DefaultDeviceName is the name the phone lists under Linked devices.
	DefaultDeviceName = "clawhost"
	// DefaultBacklogMargin: messages older than the connect time minus
	// this are not answered (a backlog after a reconnect).
	DefaultBacklogMargin = 30 * time.Second
	// DefaultPacingMin and DefaultPacingMax bound the random pause between
	// two messages the plugin sends.
	DefaultPacingMin = time.Second
	DefaultPacingMax = 3 * time.Second
	// DefaultMaxDownloadBytes caps inbound media downloads (64 MiB).
	DefaultMaxDownloadBytes = 64 << 20
	// MaxTextLength is the longest text sent as one message: 4000 UTF-16
	// units (WhatsApp takes ~65k, but a wall of text is unreadable on a
	// phone; OpenClaw's default).
	MaxTextLength = 4000
	// maxPacing bounds the pacing settings.
	maxPacing = time.Minute
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{Name: "pair_phone", Type: "string", Default: "",
		Description: `link with a pairing code instead of a QR code: the phone number of the WhatsApp account in international form ("+15551234567"); the code is shown on the status page and in clawhost status, and typed on the phone under Linked devices → Link with phone number`},
	{Name: "self_chat", Type: "bool", Default: false,
		Description: `personal-number mode: the owner's own messages in "Message yourself" are delivered to the agent (the plugin's own replies never are)`},
	{Name: "only_self_chat", Type: "bool", Default: false,
		Description: "with self_chat: deliver nothing but the self chat, so the people who write to this number never meet the agent"},
	{Name: "pacing", Type: "map(string)", Default: map[string]string{"min": DefaultPacingMin.String(), "max": DefaultPacingMax.String()},
		Description: `random pause between two messages sent, as durations: { min = "1s", max = "3s" }; WhatsApp bans numbers that send like machines`},
	{Name: "backlog_margin", Type: "string", Default: DefaultBacklogMargin.String(),
		Description: "messages older than the time of (re)connecting minus this are not answered, so a reconnect does not reply to a backlog; a duration"},
	{Name: "read_receipts", Type: "bool", Default: true,
		Description: "mark messages read (blue ticks) once the host stored them"},
	{Name: "device_name", Type: "string", Default: DefaultDeviceName,
		Description: "the name the phone lists under Linked devices (takes effect at the next linking)"},
	{Name: "web_version", Type: "string", Default: "",
		Description: `WhatsApp Web version to announce ("2.3000.1031080782"), when WhatsApp refuses this build as outdated (405) before an update of the plugin is available; empty: the version the plugin was built with`},
	{Name: "max_download_bytes", Type: "number", Default: DefaultMaxDownloadBytes,
		Description: "largest inbound media downloaded, in bytes"},
	{Name: "server_address", Type: "string", Default: "",
		Description: "tests only: host:port of a fake WhatsApp server on loopback (refused for any other address); empty: WhatsApp"},
	{Name: "server_root_key", Type: "string", Default: "",
		Description: "tests only: hex of the fake server's 32-byte root public key, trusted instead of WhatsApp's; set with server_address"},
}

// Config is the decoded config {} block.
type Config struct {
	PairPhone        string            `json:"pair_phone"`
	SelfChat         bool              `json:"self_chat"`
	OnlySelfChat     bool              `json:"only_self_chat"`
	Pacing           map[string]string `json:"pacing"`
	BacklogMargin    string            `json:"backlog_margin"`
	ReadReceipts     *bool             `json:"read_receipts"`
	DeviceName       string            `json:"device_name"`
	WebVersion       string            `json:"web_version"`
	MaxDownloadBytes float64           `json:"max_download_bytes"`
	ServerAddress    string            `json:"server_address"`
	ServerRootKey    string            `json:"server_root_key"`
}

// settings is a checked Config in the types the plugin uses.
type settings struct {
	pairPhone        string // digits only, "" when linking by QR
	selfChat         bool
	onlySelfChat     bool
	pacingMin        time.Duration
	pacingMax        time.Duration
	backlogMargin    time.Duration
	readReceipts     bool
	deviceName       string
	webVersion       store.WAVersionContainer // zero: the built-in one
	maxDownloadBytes int64
	server           string   // test server host:port, "" for WhatsApp
	rootKey          [32]byte // its root key
}

// decodeConfig decodes and checks a config {} block, reporting every
// problem at once, each at its attribute.
func decodeConfig(cfg schema.Config) (settings, error) {
	var c Config
	if err := cfg.Decode(&c); err != nil {
		return settings{}, err
	}
	s, d := c.check()
	if len(d) > 0 {
		return settings{}, d
	}
	return s, nil
}

// Validate is sdk.Plugin.Validate: it checks a block without touching the
// network or the data dir.
func Validate(_ context.Context, cfg schema.Config) error {
	_, err := decodeConfig(cfg)
	return err
}

func (c Config) check() (settings, schema.Diagnostics) {
	var d schema.Diagnostics
	s := settings{
		selfChat: c.SelfChat, onlySelfChat: c.OnlySelfChat,
		pacingMin: DefaultPacingMin, pacingMax: DefaultPacingMax,
		backlogMargin: DefaultBacklogMargin, readReceipts: c.ReadReceipts == nil || *c.ReadReceipts,
		deviceName: strings.TrimSpace(c.DeviceName), maxDownloadBytes: DefaultMaxDownloadBytes,
	}

	if p := strings.TrimSpace(c.PairPhone); p != "" {
		digits, ok := phoneDigits(p)
		if !ok {
			d.Add("pair_phone", "is not a phone number in international form", `write it with the country code and a leading "+", e.g. "+15551234567"`)
		}
		s.pairPhone = digits
	}
	if c.OnlySelfChat && !c.SelfChat {
		d.Add("only_self_chat", "needs self_chat = true", "only_self_chat limits self-chat mode to the self chat; without self_chat nothing would be delivered")
	}

	keys := make([]string, 0, len(c.Pacing))
	for k := range c.Pacing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := c.Pacing[k]
		dur, err := time.ParseDuration(strings.TrimSpace(v))
		switch {
		case k != "min" && k != "max":
			d.Add("pacing."+k, "is not a pacing setting", "pacing has min and max")
			continue
		case err != nil || dur < 0 || dur > maxPacing:
			d.Add("pacing."+k, "must be a duration from 0s to "+maxPacing.String(), `e.g. "1s" or "2500ms"`)
			continue
		}
		if k == "min" {
			s.pacingMin = dur
		} else {
			s.pacingMax = dur
		}
	}
	if _, hasMax := c.Pacing["max"]; !hasMax && s.pacingMin > s.pacingMax {
		s.pacingMax = s.pacingMin
	}
	if s.pacingMin > s.pacingMax {
		d.Add("pacing.max", "must not be less than pacing.min", "")
	}

	if v := strings.TrimSpace(c.BacklogMargin); v != "" {
		m, err := time.ParseDuration(v)
		if err != nil || m < 0 || m > 24*time.Hour {
			d.Add("backlog_margin", "must be a duration from 0s to 24h", `e.g. "30s"`)
		}
		s.backlogMargin = m
	}

	switch {
	case s.deviceName == "":
		s.deviceName = DefaultDeviceName
	case len(s.deviceName) > 50 || strings.IndexFunc(s.deviceName, unicode.IsControl) >= 0:
		d.Add("device_name", "must be at most 50 characters without control characters", "")
	}

	if v := strings.TrimSpace(c.WebVersion); v != "" {
		ver, err := store.ParseVersion(v)
		if err != nil || ver.IsZero() {
			d.Add("web_version", "is not a WhatsApp Web version", `three dot-separated numbers, e.g. "2.3000.1031080782"`)
		}
		s.webVersion = ver
	}

	if c.MaxDownloadBytes != 0 {
		if c.MaxDownloadBytes < 1 || c.MaxDownloadBytes != float64(int64(c.MaxDownloadBytes)) {
			d.Add("max_download_bytes", "must be a positive whole number", "")
		}
		s.maxDownloadBytes = int64(c.MaxDownloadBytes)
	}

	addr, key := strings.TrimSpace(c.ServerAddress), strings.TrimSpace(c.ServerRootKey)
	switch {
	case addr == "" && key != "":
		d.Add("server_root_key", "is only for a test server", "set server_address too, or remove server_root_key")
	case addr != "":
		if !loopbackAddress(addr) {
			d.Add("server_address", "must be a loopback host:port", "server_address points the plugin at a fake WhatsApp server for tests; it is refused for any address that is not 127.0.0.0/8, ::1 or localhost")
		}
		b, err := hex.DecodeString(key)
		if err != nil || len(b) != 32 {
			d.Add("server_root_key", "must be 64 hex digits", "the 32-byte root public key of the test server named by server_address")
		} else {
			copy(s.rootKey[:], b)
		}
		s.server = addr
	}
	return s, d
}

// phoneDigits returns the digits of a phone number written in
// international form ("+1 555-123 4567"), and whether it is one.
func phoneDigits(p string) (string, bool) {
	if !strings.HasPrefix(p, "+") {
		return "", false
	}
	var b strings.Builder
	for _, r := range p[1:] {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '(' || r == ')' || r == '.':
		default:
			return "", false
		}
	}
	digits := b.String()
	return digits, len(digits) >= 7 && len(digits) <= 15 && digits[0] != '0'
}

// loopbackAddress reports whether addr is host:port with a loopback host.
func loopbackAddress(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// String describes the settings for the log (no secrets: there are none).
func (s settings) String() string {
	return fmt.Sprintf("self_chat=%v only_self_chat=%v pacing=%s..%s backlog_margin=%s", s.selfChat, s.onlySelfChat, s.pacingMin, s.pacingMax, s.backlogMargin)
}
