package sparedir

import "golang.org/x/sys/unix"

// renameNew renames from to to, which must not exist (fs.ErrExist): atomic, so a chat
// whose directory appears meanwhile keeps it.
func renameNew(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}
