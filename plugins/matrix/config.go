package matrix

import (
	"context"
	"net/url"
	"regexp"
	"strings"

	"github.com/clawhost/clawhost/sdk/schema"
)

// Limits.
const (
	// MaxTextLength is the longest visible text of one event, in UTF-8
	// bytes (the host measures the rich-html kind by its visible text, as
	// every kind, so that text_limit keeps its meaning). A Matrix event is
	// at most 65,536 bytes of JSON, envelope included, and the text is in
	// it twice: body, and formatted_body with its tags. mautrix's JSON
	// writes <, > and & as six bytes each, so 8,000 bytes of text that is
	// all < and & make 48 KB of body alone; ordinary text with its HTML
	// some 20 KB. In an encrypted room the canonical JSON leaves them as
	// they are and Megolm's base64 adds a third. An event whose HTML
	// would not fit goes as its body alone (send.go fits), never cut.
	MaxTextLength = 8000
	// maxEventBytes is the size an event's content is kept under: the
	// 65,536 of the spec less room for the envelope the homeserver adds
	// (sender, ids, hashes, signatures, auth and prev events).
	maxEventBytes = 60000
	// MaxFileBytes is the largest file the plugin declares it sends
	// (Synapse's default max_upload_size, 50 MiB); a homeserver's own,
	// often lower, limit (Dendrite's default max_file_size_bytes is 10
	// MiB) is read from /_matrix/client/v1/media/config and a file over it
	// is replaced by a notice saying so (files.go).
	MaxFileBytes = 50 << 20
)

// Schema is the plugin's config {} block.
var Schema = schema.Schema{
	{Name: "homeserver", Type: "string", Required: true,
		Description: `the bot's homeserver, its client-server API base URL, e.g. "https://matrix.example.org"`},
	{Name: "user_id", Type: "string", Required: true,
		Description: `the bot's Matrix id, e.g. "@clawbot:example.org"`},
	{Name: "access_token", Type: "string", Default: "", Sensitive: true,
		Description: `the bot's access token, typically env("MATRIX_ACCESS_TOKEN"); or set password and the plugin logs in once and keeps its device; never logged`},
	{Name: "password", Type: "string", Default: "", Sensitive: true,
		Description: `the bot account's password, typically env("MATRIX_PASSWORD"), used to log in when access_token is empty; the device and its token are kept in the plugin's state (0600) across restarts`},
	{Name: "recovery_key", Type: "string", Default: "", Sensitive: true,
		Description: `the recovery key of the bot account's cross-signing keys and key backup (secret storage), typically env("MATRIX_RECOVERY_KEY"); with it the bot's device signs itself (other people's clients see it verified by its owner) and reads old messages from the backup. Empty: the plugin uses the one it made, written to matrix-recovery-key.txt in its state directory (0600), making cross-signing on first start if the account has none; never logged`},
	{Name: "invites_from", Type: "list(string)", Default: []string{},
		Description: `an extra allow: Matrix ids (@alice:example.org) whose room invites the bot joins without asking the host, "*" for anyone's; other invites are decided by the access block (owners, allow_from, pairing, dm_policy). Who may talk to the agent in a joined room is still the access block's (allow_from, groups)`},
}

// Config is the decoded config {} block.
type Config struct {
	Homeserver  string   `json:"homeserver"`
	UserID      string   `json:"user_id"`
	AccessToken string   `json:"access_token"`
	Password    string   `json:"password"`
	RecoveryKey string   `json:"recovery_key"`
	InvitesFrom []string `json:"invites_from"`
}

// mxid is a Matrix user id: @localpart:server.
var mxid = regexp.MustCompile(`^@[a-z0-9._=/+-]+:[A-Za-z0-9.-]+(:[0-9]+)?$`)

func decodeConfig(cfg schema.Config) (Config, error) {
	var c Config
	if err := cfg.Decode(&c); err != nil {
		return Config{}, err
	}
	c.Homeserver = strings.TrimRight(strings.TrimSpace(c.Homeserver), "/")
	c.UserID = strings.TrimSpace(c.UserID)
	c.AccessToken = strings.TrimSpace(c.AccessToken)
	c.RecoveryKey = strings.TrimSpace(c.RecoveryKey)
	var d schema.Diagnostics
	if u, err := url.Parse(c.Homeserver); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		d.Add("homeserver", "must be an http or https URL", `e.g. "https://matrix.example.org"`)
	}
	if !mxid.MatchString(c.UserID) {
		d.Add("user_id", "is not a Matrix user id", `a Matrix id is @localpart:server, e.g. "@clawbot:example.org"`)
	}
	if c.AccessToken == "" && c.Password == "" {
		d.Add("access_token", "access_token or password must be set", `set access_token = env("MATRIX_ACCESS_TOKEN") (Element: Settings → Help & About → Access Token), or password = env("MATRIX_PASSWORD")`)
	}
	for _, f := range c.InvitesFrom {
		if f != "*" && !mxid.MatchString(f) {
			d.Add("invites_from", "has an entry that is not a Matrix user id: "+f, `write ids as @alice:example.org, or "*" for anyone`)
		}
	}
	if len(d) > 0 {
		return Config{}, d
	}
	return c, nil
}

// Validate is sdk.Plugin.Validate: it checks a block without touching the
// network.
func Validate(_ context.Context, cfg schema.Config) error {
	_, err := decodeConfig(cfg)
	return err
}

// invitedBy reports whether an invite from user is accepted.
func (c Config) invitedBy(user string) bool {
	for _, f := range c.InvitesFrom {
		if f == "*" || f == user {
			return true
		}
	}
	return false
}
