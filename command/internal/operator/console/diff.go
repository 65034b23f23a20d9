package console

import "strings"

// diffLine is one row of two texts side by side: a line of each (or none),
// and whether they differ.
type diffLine struct {
	Left, Right       string
	HasLeft, HasRight bool
	Differs           bool
}

// maxDiffLines bounds the longest-common-subsequence table (lines x
// lines); past it the texts are shown row by row, each differing row
// marked.
const maxDiffLines = 2000

// sideBySide aligns two texts by their longest common subsequence of
// lines, so an added or changed line is marked and the rest line up.
func sideBySide(a, b string) []diffLine {
	l, r := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(l) > maxDiffLines || len(r) > maxDiffLines {
		return rowByRow(l, r)
	}
	// lcs[i][j]: the common lines of l[i:] and r[j:].
	lcs := make([][]int, len(l)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(r)+1)
	}
	for i := len(l) - 1; i >= 0; i-- {
		for j := len(r) - 1; j >= 0; j-- {
			if l[i] == r[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(l) || j < len(r) {
		switch {
		case i < len(l) && j < len(r) && l[i] == r[j]:
			out = append(out, diffLine{Left: l[i], Right: r[j], HasLeft: true, HasRight: true})
			i, j = i+1, j+1
		case j < len(r) && (i == len(l) || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, diffLine{Right: r[j], HasRight: true, Differs: true})
			j++
		default:
			out = append(out, diffLine{Left: l[i], HasLeft: true, Differs: true})
			i++
		}
	}
	return out
}

func rowByRow(l, r []string) []diffLine {
	out := make([]diffLine, max(len(l), len(r)))
	for i := range out {
		d := &out[i]
		if i < len(l) {
			d.Left, d.HasLeft = l[i], true
		}
		if i < len(r) {
			d.Right, d.HasRight = r[i], true
		}
		d.Differs = !d.HasLeft || !d.HasRight || d.Left != d.Right
	}
	return out
}
