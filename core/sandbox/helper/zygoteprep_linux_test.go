package helper

import "testing"

// TestZygoteUserEnvRoundTrip: the user a helper prepares its first start for, as the
// host passes it (UserEnv).
func TestZygoteUserEnvRoundTrip(t *testing.T) {
	for _, u := range []*User{nil, {UID: 65534, GID: 65534}, {UID: 1000, GID: 100, Groups: []uint32{4, 27}}} {
		got, err := parseZygoteUser(EncodeUser(u))
		if err != nil || !sameUser(got, u) {
			t.Errorf("%+v: got %+v, %v", u, got, err)
		}
	}
	for _, bad := range []string{"1", "1:2", "a:2:", "1:2:x", "1:2:3:4", "-1:2:"} {
		if _, err := parseZygoteUser(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
