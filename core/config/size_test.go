package config

import "testing"

func TestSizeBytes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   Size
		want int64
	}{
		{"2GB", 2 << 30},
		{"2gb", 2 << 30},
		{"2 GB", 2 << 30},
		{"512MB", 512 << 20},
		{"1.5GB", 3 << 29},
		{"1GiB", 1 << 30},
		{"64KB", 64 << 10},
		{"1TB", 1 << 40},
		{"100B", 100},
		{"0MB", 0},
		{"", 0},
		{"2", 0},
		{"GB", 0},
		{"-1GB", 0},
		{"2XB", 0},
		{"1.2.3GB", 0},
		{"99999999999TB", 0},
	} {
		if got := tc.in.Bytes(); got != tc.want {
			t.Errorf("Size(%q).Bytes() = %d, want %d", tc.in, got, tc.want)
		}
	}
}
