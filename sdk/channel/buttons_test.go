package channel

import (
	"strings"
	"testing"
)

// TestButtonLimits: each bound refuses with CodeInvalidRequest naming the
// row or button at fault and the platform; buttons within them pass.
func TestButtonLimits(t *testing.T) {
	l := ButtonLimits{Platform: "Chat", Rows: 2, PerRow: 2, ID: 4, Label: 5}
	b := func(id, label string) Button { return Button{ID: id, Label: label} }
	for _, tc := range []struct {
		name string
		rows [][]Button
		want string // "" passes
	}{
		{"fits", [][]Button{{b("a", "Yes"), b("b", "No")}, {}}, ""},
		{"rows", [][]Button{{}, {}, {}}, "3 rows of buttons; Chat takes at most 2"},
		{"per row", [][]Button{{b("a", "A"), b("b", "B"), b("c", "C")}}, "row 1 has 3 buttons; Chat takes at most 2"},
		{"empty id", [][]Button{{b("a", "A")}, {b("", "B")}}, "button 2.1: an id of 1 to 4 characters is needed, not 0"},
		{"long id", [][]Button{{b("abcde", "A")}}, "button 1.1: an id of 1 to 4 characters is needed, not 5"},
		{"twice", [][]Button{{b("a", "A")}, {b("a", "B")}}, `button 2.1: id "a" is used twice; Chat wants them unique`},
		{"blank label", [][]Button{{b("a", " ")}}, `button 1.1 (" "): a label of 1 to 5 characters is needed`},
		{"long label", [][]Button{{b("a", "ééééé!")}}, "a label of 1 to 5 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := l.Check(tc.rows)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || CodeOf(err) != CodeInvalidRequest || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %s: %q", err, CodeInvalidRequest, tc.want)
			}
		})
	}
	if err := (ButtonLimits{Platform: "Any", PerRow: 1, ID: 1, Label: 1}).Check(make([][]Button, 50)); err != nil {
		t.Errorf("Rows 0 bounded the rows: %v", err)
	}
}
