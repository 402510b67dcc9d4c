package service

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// SearchPath is the PATH a service needs to find programs the way the
// host finds them in this shell now: for each of programs (agent.command
// of each agent, already resolved against the configuration's directory
// when it is a path; "bwrap") the directory lookPath finds it in, then the
// directory of the interpreter a found script names through env (an npm
// install of claude starts `#!/usr/bin/env node`), then SystemPath(goos)
// in its order (a program found there adds nothing before it).
// Directories are not resolved through symbolic links, so a PATH entry
// such as node_modules/.bin keeps working when its link is repointed.
// missing are the programs lookPath did not find.
func SearchPath(programs []string, lookPath func(string) (string, error), goos string) (path, missing []string) {
	system := SystemPath(goos)
	add := func(dir string) { // the system's directories keep their order, last
		if dir != "" && !slices.Contains(path, dir) && !slices.Contains(system, dir) {
			path = append(path, dir)
		}
	}
	for _, p := range programs {
		found, err := lookPath(p)
		if err != nil {
			missing = append(missing, p)
			continue
		}
		if abs, err := filepath.Abs(found); err == nil {
			found = abs
		}
		add(filepath.Dir(found))
		if interp := envInterpreter(found); interp != "" {
			if ip, err := lookPath(interp); err == nil {
				if abs, err := filepath.Abs(ip); err == nil {
					add(filepath.Dir(abs))
				}
			} else {
				missing = append(missing, interp)
			}
		}
	}
	return append(path, system...), missing
}

// envInterpreter is the program a script's first line runs through env
// ("#!/usr/bin/env node" and "#!/usr/bin/env -S node --flag" give
// "node"), or "" for a binary, an absolute interpreter or an unreadable
// file.
func envInterpreter(file string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 256)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if !bytes.HasPrefix(head, []byte("#!")) {
		return ""
	}
	line, _, _ := bytes.Cut(head[2:], []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 2 || filepath.Base(fields[0]) != "env" {
		return ""
	}
	for _, f := range fields[1:] {
		if !strings.HasPrefix(f, "-") && !strings.Contains(f, "=") {
			return f
		}
	}
	return ""
}
