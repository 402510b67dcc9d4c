package setup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadEnvFile parses a clawhost.env file: KEY=VALUE lines; blank lines and
// lines starting with # are skipped; "export " before KEY is allowed; a
// value in double or single quotes is unquoted (double quotes with Go's
// escapes). A malformed line is an error naming its line, never its value.
func ReadEnvFile(data []byte) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validKey(key) {
			return nil, fmt.Errorf("line %d: want KEY=VALUE", n)
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			u, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: bad quoting", n, key)
			}
			val = u
		case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
			val = val[1 : len(val)-1]
		}
		out = append(out, [2]string{key, val})
	}
	return out, sc.Err()
}

func validKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// EnvFileFor is the env file of a configuration file: clawhost.env in its
// directory.
func EnvFileFor(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), EnvFile)
}

// LoadEnvFile reads the env file beside configPath, if there is one, and
// sets each variable that is not already set in the environment (the
// environment wins: a variable given on the command line or by a service
// manager overrides the file). It returns the names it set. A file that
// its group or others may read is refused: it holds tokens.
func LoadEnvFile(configPath string, lookup func(string) (string, bool), setenv func(string, string) error) ([]string, error) {
	vars, err := readEnvFor(configPath)
	if err != nil {
		return nil, err
	}
	var set []string
	for _, kv := range vars {
		if _, ok := lookup(kv[0]); ok {
			continue
		}
		if err := setenv(kv[0], kv[1]); err != nil {
			return set, fmt.Errorf("read %s: set %s: %w", EnvFileFor(configPath), kv[0], err)
		}
		set = append(set, kv[0])
	}
	return set, nil
}

// readEnvFor is the variables of the env file beside configPath; none when there is no
// file. A file its group or others may read is refused: it holds tokens.
func readEnvFor(configPath string) ([][2]string, error) {
	path := EnvFileFor(configPath)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("read %s: it holds secrets and is mode %04o (readable by others); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	vars, err := ReadEnvFile(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return vars, nil
}

// EnvSource is the environment a running host took from its clawhost.env: at a reload it
// reads the file again (Reload), so a token added or changed there is seen without a
// restart. A variable the environment set before the host started (the command line,
// a service manager) keeps winning over the file, as at the start — unless it held the
// file's own value then (systemd's EnvironmentFile= reads the same file): that one follows
// the file.
type EnvSource struct {
	configPath string
	lookup     func(string) (string, bool)
	setenv     func(string, string) error
	unsetenv   func(string) error
	// owned are the variables the file decides: set from it, or found with its value.
	owned map[string]bool
}

// NewEnvSource loads the env file beside configPath as LoadEnvFile does and remembers
// which variables it decides.
func NewEnvSource(configPath string, lookup func(string) (string, bool), setenv func(string, string) error, unsetenv func(string) error) (*EnvSource, error) {
	s := &EnvSource{configPath: configPath, lookup: lookup, setenv: setenv, unsetenv: unsetenv, owned: map[string]bool{}}
	vars, err := readEnvFor(s.configPath)
	if err != nil {
		return nil, err
	}
	for _, kv := range vars {
		if v, ok := lookup(kv[0]); ok && v == kv[1] {
			s.owned[kv[0]] = true
		}
	}
	set, err := LoadEnvFile(configPath, lookup, setenv)
	for _, name := range set {
		s.owned[name] = true
	}
	return s, err
}

// Reload reads the file again: a variable it decides, or one the environment does not
// set, takes the file's value; one it decided that is no longer in the file is unset.
// It returns the names whose value changed (never a value). On an error (an unsafe or
// broken file) nothing changes.
func (s *EnvSource) Reload() ([]string, error) {
	vars, err := readEnvFor(s.configPath)
	if err != nil {
		return nil, err
	}
	var changed []string
	inFile := map[string]bool{}
	for _, kv := range vars {
		inFile[kv[0]] = true
		cur, set := s.lookup(kv[0])
		if set && !s.owned[kv[0]] {
			continue
		}
		s.owned[kv[0]] = true
		if set && cur == kv[1] {
			continue
		}
		if err := s.setenv(kv[0], kv[1]); err != nil {
			return changed, fmt.Errorf("read %s: set %s: %w", EnvFileFor(s.configPath), kv[0], err)
		}
		changed = append(changed, kv[0])
	}
	for name := range s.owned {
		if inFile[name] {
			continue
		}
		delete(s.owned, name)
		if _, set := s.lookup(name); set {
			if err := s.unsetenv(name); err != nil {
				return changed, err
			}
			changed = append(changed, name)
		}
	}
	return changed, nil
}
