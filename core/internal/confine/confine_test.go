package confine

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The child's probes, run on the thread Apply confined: what a sandboxed tool
// would try. Each answers "ok" or the error.
func probe(dirs [3]string) map[string]string {
	res := map[string]string{}
	put := func(k string, err error) {
		if err == nil {
			res[k] = "ok"
		} else {
			res[k] = err.Error()
		}
	}
	// name_to_handle_at: the first half of the shocker escape.
	var h struct {
		bytes uint32
		typ   int32
		f     [128]byte
	}
	h.bytes = 128
	var mnt int32
	p, _ := unix.BytePtrFromString("/")
	_, _, e := unix.RawSyscall6(unix.SYS_NAME_TO_HANDLE_AT, atFDCWD, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&mnt)), 0, 0)
	put("name_to_handle_at", errnoErr(e))
	_, _, e = unix.RawSyscall6(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&[]byte("user\x00")[0])), uintptr(unsafe.Pointer(&[]byte("k\x00")[0])), uintptr(unsafe.Pointer(&[]byte("v")[0])), 1, uintptr(0xfffffffc), 0) // KEY_SPEC_USER_KEYRING
	put("add_key", errnoErr(e))
	_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	put("unshare", errnoErr(e))
	_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	put("clone3", errnoErr(e))
	_, err := os.ReadFile(filepath.Join(dirs[0], "f"))
	put("read granted", err)
	put("write read-only", os.WriteFile(filepath.Join(dirs[0], "g"), nil, 0o600))
	put("write granted", os.WriteFile(filepath.Join(dirs[1], "g"), nil, 0o600))
	_, err = os.ReadFile(filepath.Join(dirs[2], "f"))
	put("read elsewhere", err)
	_, err = os.ReadFile(filepath.Join(dirs[2], "g"))
	put("read granted file", err)
	st, _ := os.ReadFile("/proc/thread-self/status")
	for _, l := range strings.Split(string(st), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && (k == "CapEff" || k == "CapBnd" || k == "Seccomp") {
			res[k] = strings.TrimSpace(v)
		}
	}
	return res
}

func errnoErr(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func TestMain(m *testing.M) {
	if spec := os.Getenv("CONFINE_TEST_SPEC"); spec != "" {
		runtime.LockOSThread()
		s, err := DecodeSpec(spec)
		if err == nil {
			err = Apply(s)
		}
		if err != nil {
			os.Stderr.WriteString(err.Error())
			os.Exit(3)
		}
		var dirs [3]string
		copy(dirs[:], strings.Split(os.Getenv("CONFINE_TEST_DIRS"), ":"))
		_ = json.NewEncoder(os.Stdout).Encode(probe(dirs))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestApply: on a confined thread the escape's calls, the keyring, new
// namespaces and paths beyond the grants are refused, and no capability is
// left; the same probes on a thread whose every defence was left out succeed,
// so the test can fail.
func TestApply(t *testing.T) {
	t.Parallel()
	if ok, _ := State(); !ok {
		t.Skip("no seccomp filter mode on this kernel")
	}
	var dirs [3]string
	for i := range dirs {
		dirs[i] = t.TempDir()
		if err := os.WriteFile(filepath.Join(dirs[i], "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A file granted by itself (Spec.Files): readable, its sibling f not.
	file := filepath.Join(dirs[2], "g")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(s Spec) map[string]string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "CONFINE_TEST_SPEC="+s.Encode(), "CONFINE_TEST_DIRS="+strings.Join(dirs[:], ":"))
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("child: %v: %s", err, ee.Stderr)
		}
		var res map[string]string
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("child's answer %q: %v", out, err)
		}
		return res
	}
	_, abi := State()
	got := run(Spec{ReadOnly: []string{dirs[0], "/proc", file}, Writable: []string{dirs[1]}, Files: []string{file}})
	want := map[string]string{
		"name_to_handle_at": "operation not permitted", "add_key": "operation not permitted",
		"unshare": "operation not permitted", "clone3": "function not implemented",
		"read granted": "ok", "write granted": "ok", "read granted file": "ok",
		"CapEff": "0000000000000000", "CapBnd": "0000000000000000", "Seccomp": "2",
	}
	if abi > 0 {
		want["write read-only"] = "permission denied"
		want["read elsewhere"] = "permission denied"
	}
	for k, v := range want {
		if !strings.Contains(got[k], v) {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	weak := run(Spec{Weaken: []string{"seccomp", "landlock", "caps", "keyring"}})
	for _, k := range []string{"name_to_handle_at", "read elsewhere"} {
		if weak[k] != "ok" {
			t.Errorf("without the defences %s: %q, want ok (the probe cannot tell)", k, weak[k])
		}
	}
}

// atFDCWD is AT_FDCWD (-100) as a system call's argument.
var atFDCWD = func() uintptr { fd := unix.AT_FDCWD; return uintptr(fd) }()
