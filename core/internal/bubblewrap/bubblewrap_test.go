package bubblewrap

import "testing"

// TestInstallCommand: the package manager is read from os-release (ID,
// then ID_LIKE); root needs no sudo; an unknown Linux gets the three
// common commands; macOS has none.
func TestInstallCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, goos, release string
		root                bool
		want                string
	}{
		{"debian", "linux", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n", false, "sudo apt-get install bubblewrap"},
		{"ubuntu as root", "linux", "ID=ubuntu\nID_LIKE=debian\n", true, "apt-get install bubblewrap"},
		{"mint by ID_LIKE", "linux", "ID=somethingnew\nID_LIKE=\"ubuntu debian\"\n", false, "sudo apt-get install bubblewrap"},
		{"fedora", "linux", "NAME=Fedora\nID=fedora\n", false, "sudo dnf install bubblewrap"},
		{"rocky", "linux", "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", false, "sudo dnf install bubblewrap"},
		{"arch", "linux", "ID=arch\n", false, "sudo pacman -S bubblewrap"},
		{"alpine", "linux", "ID=alpine\n", true, "apk add bubblewrap"},
		{"unknown", "linux", "ID=plan9\n", false, "sudo apt-get install bubblewrap (Debian, Ubuntu), sudo dnf install bubblewrap (Fedora) or sudo pacman -S bubblewrap (Arch)"},
		{"no os-release", "linux", "", true, "apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap (Fedora) or pacman -S bubblewrap (Arch)"},
		{"macos", "darwin", "", false, ""},
	} {
		if got := InstallCommand(tc.goos, []byte(tc.release), tc.root); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
