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
	const width, height, bars = 600, 120, 60
	var peak int64
	for _, m := range ov.Minutes {
		var sum int64
		for _, n := range m.ByStatus {
			sum += n
		}
		peak = max(peak, sum)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="chart-title"><title id="chart-title">`+
		`Events accepted per minute over the last hour: %d in all, at most %d in one minute</title>`, width, height+14, width, height+14, ov.Accepted, peak)
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="1"/>`, height, width, height)
	yAxis(&b, peak, width, height)
	slot := float64(width) / bars
	for _, m := range ov.Minutes {
		i := int(m.Minute.Sub(ov.Since) / time.Minute)
		if i < 0 || i >= bars+1 || peak == 0 {
			continue
		}
		y := float64(height)
		for _, sf := range statusFills {
			n := m.ByStatus[sf.status]
			if n == 0 {
				continue
			}
			h := float64(n) / float64(peak) * (height - 4)
			y -= h
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %d</title></rect>`,
				float64(min(i, bars-1))*slot+1, y, slot-2, h, sf.fill, m.Minute.UTC().Format("15:04 UTC"), sf.status, n)
		}
	}
	fmt.Fprintf(&b, `<text x="0" y="%d" font-size="11" fill="#444">%s</text><text x="%d" y="%d" font-size="11" fill="#444" text-anchor="end">%s</text></svg>`,
		height+12, ov.Since.UTC().Format("15:04 UTC"), width, height+12, ov.Until.UTC().Format("15:04 UTC"))
	return template.HTML(b.String()) //nolint:gosec // built from numbers and fixed words only
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
