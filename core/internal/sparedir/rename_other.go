//go:build !linux

package sparedir

import "errors"

// renameNew needs renameat2's RENAME_NOREPLACE; the sandbox runs on Linux only, so
// elsewhere no spare is adopted this way.
func renameNew(from, to string) error {
	return errors.New("renaming without replacing needs Linux")
}
