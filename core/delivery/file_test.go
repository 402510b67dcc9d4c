package delivery

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/clawhost/clawhost/core/message"
	"github.com/clawhost/clawhost/sdk/channel"
)

// TestSendFile: a file goes to a channel that sends documents, as a
// private temporary file with exactly the data, removed after the send;
// a channel without documents, or a failed send, gets false (the caller
// says it in text).
func TestSendFile(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 4000)
	tgt := message.Target{Instance: "tg", ChatID: "1"}
	if f.d.SendFile(sk("k"), tgt, "command.sh", []byte("ls"), "the command") {
		t.Fatal("sent a file to a channel that takes none")
	}
	f.ch.desc.Capabilities.MediaOut = []channel.MediaKind{channel.MediaDocument}
	var path string
	var data []byte
	var mode os.FileMode
	f.ch.onSend = func(req channel.SendRequest) {
		if len(req.Media) == 1 {
			path = req.Media[0].Path
			data, _ = os.ReadFile(path)
			if fi, err := os.Stat(path); err == nil {
				mode = fi.Mode().Perm()
			}
		}
	}
	if !f.d.SendFile(sk("k"), tgt, "../command.sh", []byte("ls   ; id"), "the command") {
		t.Fatal("the file was not sent")
	}
	if string(data) != "ls   ; id" || mode != 0o600 {
		t.Errorf("file %q mode %o", data, mode)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary file %s is left: %v", path, err)
	}
	if l := f.ch.log(); !slices.ContainsFunc(l, func(s sent) bool { return s.op == "send" && s.text == "the command" }) {
		t.Errorf("calls %+v", l)
	}
	f.ch.sendErrs = []error{channel.Errorf(channel.CodeChatNotFound, "gone")}
	if f.d.SendFile(sk("k"), tgt, "command.sh", []byte("ls"), "the command") {
		t.Error("a failed send reported sent")
	}
}
