//go:build linux

package sparedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// spare makes a spare's directories as the sandbox's preparation does, each with a file.
func spare(t *testing.T) (d Dirs, ws, stateDir string) {
	t.Helper()
	root := t.TempDir()
	ws, stateDir = filepath.Join(root, "ws"), filepath.Join(root, "state")
	d, err := New(ws, stateDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{d.Media, d.State} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(d.State, ".claude.json"), "{}")
	write(t, filepath.Join(d.Media, "made-by-claude.txt"), "spare")
	return d, ws, stateDir
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestAdoptMakesTheDirectoriesTheChats(t *testing.T) {
	d, ws, stateDir := spare(t)
	if !IsSpare(d.Name()) || filepath.Dir(d.Media) != filepath.Join(ws, "media") {
		t.Fatalf("spare media %s", d.Media)
	}
	media, state := filepath.Join(ws, "media", "tg_direct_42"), filepath.Join(stateDir, "chats", "tg:direct:42")
	if err := d.Adopt(media, state); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(state, ".claude.json")); got != "{}" {
		t.Errorf("the chat's state: %q", got)
	}
	if got := read(t, filepath.Join(media, "made-by-claude.txt")); got != "spare" {
		t.Errorf("the chat's media: %q", got)
	}
	// A file the host saves for the chat is where the spare's path names it.
	write(t, filepath.Join(media, "photo.jpg"), "jpeg")
	if got := read(t, filepath.Join(d.Media, "photo.jpg")); got != "jpeg" {
		t.Errorf("through the spare's path: %q", got)
	}
	if real, _ := filepath.EvalSymlinks(filepath.Join(d.Media, "photo.jpg")); real != filepath.Join(media, "photo.jpg") {
		t.Errorf("the spare's path resolves to %s", real)
	}
	// Once the process ended: the link goes, the chat's files stay.
	d.Remove()
	if _, err := os.Lstat(d.Media); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link stays: %v", err)
	}
	if got := read(t, filepath.Join(media, "photo.jpg")); got != "jpeg" {
		t.Errorf("the chat's media after Remove: %q", got)
	}
	if got := read(t, filepath.Join(state, ".claude.json")); got != "{}" {
		t.Errorf("the chat's state after Remove: %q", got)
	}
}

// A chat with claude state of its own, a download in progress, a directory among its
// media or more attachments than a first message brings is not brand-new: it keeps what
// it has (its attachment is not moved), and the spare keeps its own, unmoved.
func TestAdoptRefusesAChatWithDirectories(t *testing.T) {
	for _, has := range []string{"state", "download", "directory", "many"} {
		t.Run(has, func(t *testing.T) {
			d, ws, stateDir := spare(t)
			media, state := filepath.Join(ws, "media", "tg_direct_42"), filepath.Join(stateDir, "chats", "tg:direct:42")
			own := filepath.Join(media, "a-first.jpg")
			write(t, own, "the chat's")
			switch has {
			case "state":
				write(t, filepath.Join(state, "own.jsonl"), "{}")
			case "download":
				write(t, filepath.Join(media, "b.jpg.part"), "half")
			case "directory":
				write(t, filepath.Join(media, "b", "x"), "x")
			case "many":
				for i := range maxCarried {
					write(t, filepath.Join(media, fmt.Sprintf("b%d", i)), "x")
				}
			}
			if has != "state" && Carriable(media) {
				t.Errorf("%s: the chat's media are carriable", has)
			}
			if err := d.Adopt(media, state); !errors.Is(err, ErrTaken) {
				t.Fatalf("Adopt: %v, want ErrTaken", err)
			}
			if got := read(t, own); got != "the chat's" {
				t.Errorf("the chat's file: %q", got)
			}
			if _, err := os.Lstat(filepath.Join(d.Media, "a-first.jpg")); err == nil {
				t.Error("the chat's file stayed in the spare's directory")
			}
			if got := read(t, filepath.Join(d.Media, "made-by-claude.txt")); got != "spare" {
				t.Errorf("the spare's media: %q", got)
			}
			if got := read(t, filepath.Join(d.State, ".claude.json")); got != "{}" {
				t.Errorf("the spare's state: %q", got)
			}
			if fi, err := os.Lstat(d.Media); err != nil || !fi.IsDir() {
				t.Errorf("the spare's media is no directory: %v", err)
			}
		})
	}
}

// A brand-new chat's first message brought an attachment: it is carried into the
// spare's directory, which becomes the chat's, and is there by either path.
func TestAdoptCarriesTheFirstAttachments(t *testing.T) {
	d, ws, stateDir := spare(t)
	media, state := filepath.Join(ws, "media", "c"), filepath.Join(stateDir, "chats", "c")
	write(t, filepath.Join(media, "1-0-photo.jpg"), "jpeg")
	if !Carriable(media) {
		t.Fatal("a first message's attachment is not carriable")
	}
	if err := d.Adopt(media, state); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(media, "1-0-photo.jpg"), filepath.Join(d.Media, "1-0-photo.jpg")} {
		if got := read(t, p); got != "jpeg" {
			t.Errorf("%s: %q", p, got)
		}
	}
	if got := read(t, filepath.Join(media, "made-by-claude.txt")); got != "spare" {
		t.Errorf("the spare's own file: %q", got)
	}
}

// A chat whose directories are empty (the host made them ahead: agent.run_as) is
// brand-new all the same: the spare's take their place.
func TestAdoptTakesEmptyDirectories(t *testing.T) {
	d, ws, stateDir := spare(t)
	media, state := filepath.Join(ws, "media", "c"), filepath.Join(stateDir, "chats", "c")
	for _, dir := range []string{media, state} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if !Vacant(dir) {
			t.Fatalf("%s: an empty directory is not vacant", dir)
		}
	}
	if err := d.Adopt(media, state); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(media, "made-by-claude.txt")); got != "spare" {
		t.Errorf("the chat's media: %q", got)
	}
	if Vacant(media) || !Vacant(filepath.Join(ws, "none")) {
		t.Error("Vacant")
	}
}

// A spare without claude state of its own (claude has no config directory) moves only
// its media; one whose media directory is gone is refused (its sandbox shows a removed
// directory).
func TestAdoptWithoutState(t *testing.T) {
	d, ws, stateDir := spare(t)
	os.RemoveAll(d.State)
	media, state := filepath.Join(ws, "media", "c"), filepath.Join(stateDir, "chats", "c")
	if err := d.Adopt(media, state); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a state directory appeared: %v", err)
	}
	d2, _ := New(ws, stateDir)
	if err := d2.Adopt(filepath.Join(ws, "media", "c2"), filepath.Join(stateDir, "chats", "c2")); err == nil || errors.Is(err, ErrTaken) {
		t.Errorf("a spare without its media directory: %v", err)
	}
	if err := d2.Adopt(filepath.Join(ws, "elsewhere"), state); err == nil {
		t.Error("a media directory outside <workspace>/media was taken")
	}
}

func TestRemoveAndSweep(t *testing.T) {
	d, ws, stateDir := spare(t)
	chat := filepath.Join(ws, "media", "tg_direct_1", "keep.jpg")
	write(t, chat, "x")
	chatState := filepath.Join(stateDir, "chats", "tg:direct:1", ".claude.json")
	write(t, chatState, "{}")
	d2, _ := New(ws, stateDir)
	os.MkdirAll(d2.Media, 0o700)
	os.MkdirAll(d2.State, 0o700)
	d.Remove() // never adopted: both go
	for _, p := range []string{d.Media, d.State} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s stays: %v", p, err)
		}
	}
	if n, err := Sweep(ws, stateDir, time.Now().Add(-time.Hour)); n != 0 || err != nil {
		t.Fatalf("Sweep took %d made since (%v)", n, err)
	}
	if n, err := Sweep(ws, stateDir, time.Now().Add(time.Hour)); n != 2 || err != nil {
		t.Fatalf("Sweep removed %d, want 2 (%v)", n, err)
	}
	for _, p := range []string{d2.Media, d2.State} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Sweep left %s: %v", p, err)
		}
	}
	for _, p := range []string{chat, chatState} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("Sweep took a chat's %s: %v", p, err)
		}
	}
}

// What carry moved, back moves back: Adopt's undo when the directory's own rename fails
// after it (a file arrived meanwhile).
func TestCarryBack(t *testing.T) {
	from, to := filepath.Join(t.TempDir(), "chat"), t.TempDir()
	write(t, filepath.Join(from, "1-0-a.jpg"), "a")
	write(t, filepath.Join(from, "1-1-b.jpg"), "b")
	back, err := carry(from, to)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(to, "1-0-a.jpg")); got != "a" {
		t.Fatalf("carried: %q", got)
	}
	back()
	for n, want := range map[string]string{"1-0-a.jpg": "a", "1-1-b.jpg": "b"} {
		if got := read(t, filepath.Join(from, n)); got != want {
			t.Errorf("%s after back: %q", n, got)
		}
		if _, err := os.Lstat(filepath.Join(to, n)); err == nil {
			t.Errorf("%s stayed in the spare's directory", n)
		}
	}
}
