package tables

import (
	"strings"
	"time"
)

// where builds a WHERE clause of equalities and a period, with "?"
// parameters.
type where struct {
	conds []string
	args  []any
}

// period adds since ≤ at < until, each bound only when set.
func (w *where) period(col string, since, until time.Time) {
	if !since.IsZero() {
		w.add(col+" >= ?", since.UnixNano())
	}
	if !until.IsZero() {
		w.add(col+" < ?", until.UnixNano())
	}
}

// equal adds col = v for each pair of cols whose value is not "".
func (w *where) equal(cols ...[2]string) {
	for _, c := range cols {
		if c[1] != "" {
			w.add(c[0]+" = ?", c[1])
		}
	}
}

func (w *where) add(cond string, arg any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, arg)
}

// String is the clause with its leading " WHERE ", "" for no condition.
func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}
