package postgres

import "testing"

func TestNumbered(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT 1":                                    "SELECT 1",
		"WHERE a = ? AND b = ?":                       "WHERE a = $1 AND b = $2",
		"WHERE (? = '' OR x = ?) AND y > ?":           "WHERE ($1 = '' OR x = $2) AND y > $3",
		"SELECT '?', \"odd?name\" FROM t WHERE a = ?": "SELECT '?', \"odd?name\" FROM t WHERE a = $1",
		"VALUES (?, ?, ?)":                            "VALUES ($1, $2, $3)",
	} {
		if got := numbered(in); got != want {
			t.Errorf("numbered(%q) = %q, want %q", in, got, want)
		}
		if again := numbered(in); again != want {
			t.Errorf("numbered(%q) from the cache = %q", in, again)
		}
	}
}
