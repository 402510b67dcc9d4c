package markup

import (
	"strings"

	"github.com/rivo/uniseg"
	east "github.com/yuin/goldmark/extension/ast"
)

// tableText is the table policy: each cell's text (its inline markup
// rendered plain, line breaks as spaces) in columns padded to the widest
// cell, " | " between them, the header underlined with dashes ("-+-" under
// the bars); right-aligned columns are padded on the left.
func tableText(w *walker, t *east.Table) string {
	var rows [][]string
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for cell := row.FirstChild(); cell != nil; cell = cell.NextSibling() {
			sub := &walker{src: w.src, st: style{}}
			sub.init()
			sub.inlines(cell)
			cells = append(cells, strings.TrimSpace(strings.ReplaceAll(sub.vis.String(), "\n", " ")))
		}
		rows = append(rows, cells)
	}
	return alignTable(rows, t.Alignments)
}

func alignTable(rows [][]string, align []east.Alignment) string {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], uniseg.StringWidth(c))
		}
	}
	var lines []string
	for k, row := range rows {
		cells := make([]string, len(widths))
		for i := range widths {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			pad := strings.Repeat(" ", widths[i]-uniseg.StringWidth(c))
			if i < len(align) && align[i] == east.AlignRight {
				cells[i] = pad + c
			} else {
				cells[i] = c + pad
			}
		}
		lines = append(lines, strings.TrimRight(strings.Join(cells, " | "), " "))
		if k == 0 {
			dashes := make([]string, len(widths))
			for i, wd := range widths {
				dashes[i] = strings.Repeat("-", max(wd, 1))
			}
			lines = append(lines, strings.Join(dashes, "-+-"))
		}
	}
	return strings.Join(lines, "\n")
}
