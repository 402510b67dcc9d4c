package channel

import (
	"strings"
	"unicode/utf8"
)

// ButtonLimits are a platform's bounds on the buttons under one message,
// which a channel checks before it sends (Check).
type ButtonLimits struct {
	// Platform names the platform in the errors ("Discord takes at most 5").
	Platform string
	// Rows is the most rows of buttons (0: no bound), PerRow the most
	// buttons in a row; ID and Label are the most characters of a
	// button's id and of its label.
	Rows, PerRow, ID, Label int
}

// Check refuses with CodeInvalidRequest, naming the first row or button
// at fault (row.column, from 1), what the platform would: more than Rows
// rows or PerRow buttons in a row, an id that is empty, over ID characters
// or used twice in the message, a blank label or one over Label
// characters.
func (l ButtonLimits) Check(rows [][]Button) error {
	if l.Rows > 0 && len(rows) > l.Rows {
		return Errorf(CodeInvalidRequest, "%d rows of buttons; %s takes at most %d", len(rows), l.Platform, l.Rows)
	}
	seen := map[string]bool{}
	for i, row := range rows {
		if len(row) > l.PerRow {
			return Errorf(CodeInvalidRequest, "row %d has %d buttons; %s takes at most %d", i+1, len(row), l.Platform, l.PerRow)
		}
		for j, b := range row {
			switch n := utf8.RuneCountInString(b.ID); {
			case n == 0 || n > l.ID:
				return Errorf(CodeInvalidRequest, "button %d.%d: an id of 1 to %d characters is needed, not %d", i+1, j+1, l.ID, n)
			case seen[b.ID]:
				return Errorf(CodeInvalidRequest, "button %d.%d: id %q is used twice; %s wants them unique in a message", i+1, j+1, b.ID, l.Platform)
			}
			if strings.TrimSpace(b.Label) == "" || utf8.RuneCountInString(b.Label) > l.Label {
				return Errorf(CodeInvalidRequest, "button %d.%d (%q): a label of 1 to %d characters is needed", i+1, j+1, b.Label, l.Label)
			}
			seen[b.ID] = true
		}
	}
	return nil
}
