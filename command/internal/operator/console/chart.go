package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// statusFills colour a chart's bars by inbox status (SVG attributes: the
// CSP allows no style attribute).
var statusFills = []struct {
	status inbox.Status
	fill   string
}{
	{inbox.StatusPublished, "#2f6f4f"}, {inbox.StatusWaiting, "#5b7fa6"}, {inbox.StatusUnhandled, "#b08a2e"}, {inbox.StatusQuarantined, "#a23b3b"},
}

// minuteChart draws events accepted per minute over the window as stacked
// bars, one per minute, server-side, with a text alternative.
func minuteChart(ov operate.Overview) template.HTML {
	const bars = 60
	var stacks [][]segment
	var slots []int
	for _, m := range ov.Minutes {
		i := int(m.Minute.Sub(ov.Since) / time.Minute)
		if i < 0 || i >= bars+1 {
			continue
		}
		var st []segment
		for _, sf := range statusFills {
			st = append(st, segment{n: m.ByStatus[sf.status], fill: sf.fill, title: m.Minute.UTC().Format("15:04 UTC") + " " + string(sf.status)})
		}
		stacks, slots = append(stacks, st), append(slots, min(i, bars-1))
	}
	return barChart("chart-title", fmt.Sprintf("Events accepted per minute over the last hour: %d in all", ov.Accepted), "in one minute",
		bars, slots, stacks, ov.Since.UTC().Format("15:04 UTC"), ov.Until.UTC().Format("15:04 UTC"))
}

// segment is one part of a stacked bar: a count, its colour and what its
// tooltip names it.
type segment struct {
	n           int64
	fill, title string
}

// barChart draws stacked bars, the i-th at slots[i] of bars, scaled to the
// tallest, with a scale, the window's ends under it and a title for
// screen readers (what, then "at most N <per>").
func barChart(id, what, per string, bars int, slots []int, stacks [][]segment, from, to string) template.HTML {
	const width, height = 600, 120
	var peak int64
	for _, st := range stacks {
		var sum int64
		for _, sg := range st {
			sum += sg.n
		}
		peak = max(peak, sum)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="%s"><title id="%s">%s, at most %d %s</title>`,
		width, height+14, width, height+14, id, id, template.HTMLEscapeString(what), peak, per)
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="1"/>`, height, width, height)
	yAxis(&b, peak, width, height)
	slot := float64(width) / float64(bars)
	for i, st := range stacks {
		if peak == 0 {
			break
		}
		y := float64(height)
		for _, sg := range st {
			if sg.n == 0 {
				continue
			}
			h := float64(sg.n) / float64(peak) * (height - 4)
			y -= h
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d</title></rect>`,
				float64(slots[i])*slot+1, y, slot-2, h, sg.fill, template.HTMLEscapeString(sg.title), sg.n)
		}
	}
	fmt.Fprintf(&b, `<text x="0" y="%d" font-size="11" fill="#444">%s</text><text x="%d" y="%d" font-size="11" fill="#444" text-anchor="end">%s</text></svg>`,
		height+12, from, width, height+12, to)
	return template.HTML(b.String()) //nolint:gosec // numbers, fixed words and escaped titles only
}

// yAxis writes a chart's scale: dashed gridlines at its peak and half of
// it, each labelled, and 0 on the baseline, so a chart reads without its
// title.
func yAxis(b *strings.Builder, peak int64, width, height int) {
	fmt.Fprintf(b, `<text x="2" y="%d" font-size="11" fill="#444">0</text>`, height-2)
	if peak == 0 {
		return
	}
	for _, v := range []int64{peak, peak / 2} {
		if v == 0 {
			continue
		}
		y := float64(height) - float64(v)/float64(peak)*float64(height-4)
		fmt.Fprintf(b, `<line x1="0" y1="%.1f" x2="%d" y2="%.1f" stroke="#bbb" stroke-width="1" stroke-dasharray="4 4"/>`+
			`<text x="2" y="%.1f" font-size="11" fill="#444">%d</text>`, y, width, y, y+11, v)
	}
}
