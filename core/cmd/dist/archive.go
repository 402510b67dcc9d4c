package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// file is one regular file of an archive: its name under the top
// directory, where its bytes are, and its mode.
type file struct {
	name string
	src  string
	mode int64
}

// writeArchive writes a gzipped tar of files under the directory top to w,
// the same bytes for the same inputs: the top directory first, then the
// files sorted by name, each subdirectory's entry before its first file;
// every entry owned by 0:0 with no user or group
// name, dated mtime, with the mode given (0755 for the directory); the
// gzip header has no name and no time.
func writeArchive(w io.Writer, top string, files []file, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	hdr := func(name string, mode, size int64, typ byte) *tar.Header {
		return &tar.Header{Typeflag: typ, Name: name, Mode: mode, Size: size, ModTime: mtime, Format: tar.FormatUSTAR}
	}
	if err := tw.WriteHeader(hdr(top+"/", 0o755, 0, tar.TypeDir)); err != nil {
		return err
	}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b file) int { return strings.Compare(a.name, b.name) })
	dirs := map[string]bool{}
	for _, f := range sorted {
		// A file in a directory (docs/…) follows that directory's entry.
		for i, c := range f.name {
			if d := f.name[:i+1]; c == '/' && !dirs[d] {
				dirs[d] = true
				if err := tw.WriteHeader(hdr(top+"/"+d, 0o755, 0, tar.TypeDir)); err != nil {
					return err
				}
			}
		}
		if err := addFile(tw, hdr, top, f); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// addFile writes one file's header and bytes.
func addFile(tw *tar.Writer, hdr func(string, int64, int64, byte) *tar.Header, top string, f file) error {
	in, err := os.Open(f.src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f.src)
	}
	if err := tw.WriteHeader(hdr(top+"/"+f.name, f.mode, st.Size(), tar.TypeReg)); err != nil {
		return err
	}
	if _, err := io.Copy(tw, in); err != nil {
		return fmt.Errorf("copy %s: %w", f.src, err)
	}
	return nil
}

// writeSums writes dir/SHA256SUMS: "<sha256>  <name>" per archive, sorted
// by name (the format sha256sum -c reads).
func writeSums(dir string, names []string) error {
	names = slices.Sorted(slices.Values(names))
	var b strings.Builder
	for _, n := range names {
		sum, err := sha256File(filepath.Join(dir, n))
		if err != nil {
			return fmt.Errorf("checksum %s: %w", n, err)
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, n)
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write SHA256SUMS: %w", err)
	}
	return nil
}

// sha256File is the hex SHA-256 of the file at path.
func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
