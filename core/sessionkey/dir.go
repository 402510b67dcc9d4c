package sessionkey

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MediaDir is the directory under the agent's workspace that holds one
// directory per session, named by [Dir], with the session's attachments.
const MediaDir = "media"

// maxDirLen bounds a [Dir] name well under NAME_MAX (255 bytes on Linux
// file systems): longer encodings are shortened and made unique by a hash.
const maxDirLen = 200

// Dir returns the name of the directory of a chat's conversation key
// (a [Key]'s Chat; [Key.Dir]): a session's attachments live in
// <workspace>/media/<Dir(chat)>. It is a single path element made of
// [A-Za-z0-9._%-] only, never "." or "..", at most 200 bytes.
//
// The agent is not in the name: the directory is in the agent's
// workspace, a chat keeps its directory whichever agent serves it, and
// directories made before keys carried the agent keep their names. The
// encoding is injective, so two sessions of one agent never share a
// directory:
// ':' becomes '_'; every other byte outside [A-Za-z0-9.-] (including '_'
// and '%' themselves) becomes %XX (upper-case hex); a leading '.' becomes
// %2E. So "tg:direct:42" is "tg_direct_42" and decoding is plain percent-
// decoding after mapping '_' back to ':'. An encoding longer than 200
// bytes keeps its first 160 bytes (never cutting an escape) followed by
// '~' and the first 128 bits of the key's SHA-256 in hex: '~' appears in
// no short encoding, and two long keys share a name only if their hashes
// collide. The empty key, which no session has, is "%".
//
// The media pruner and the claude sandbox rely on this one function:
// change it and existing attachments are orphaned (then pruned).
func Dir(key string) string {
	if key == "" {
		return "%"
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(key))
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == ':':
			b.WriteByte('_')
		case c == '.' && i == 0:
			b.WriteString("%2E")
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		}
	}
	s := b.String()
	if len(s) <= maxDirLen {
		return s
	}
	cut := 160
	if i := strings.LastIndexByte(s[cut-2:cut], '%'); i >= 0 {
		cut -= 2 - i // the escape starting there would be split
	}
	sum := sha256.Sum256([]byte(key))
	return s[:cut] + "~" + hex.EncodeToString(sum[:16])
}
