package tstime

import "testing"

func TestOrNilIsTheRealClock(t *testing.T) {
	var std Clock = Or(nil)
	if _, ok := std.(Std); !ok {
		t.Fatal("Or(nil) is not the real clock")
	}
}
