package console

import (
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// seriesColors tell a chart's lines apart (SVG attributes: the CSP allows
// no style attribute); a legend names them in words too.
var seriesColors = []string{"#1f5d99", "#2f6f4f", "#a23b3b", "#b08a2e", "#6a4c93", "#3c7f8c", "#8c5a3c", "#555555"}

// series is one line of a chart: a value per sample, absent where it was
// not read (the line breaks there, rather than drop to zero).
type series struct {
	Name, Color string
	Values      []*int64
	// Latest is the newest value read; -1: none (no offset committed in
	// the samples: the group may run, and be Stable, without one).
	Latest int64
}

// lineChart is the overview's lag charts: the groups' lag and the slot's
// retained WAL over the last hour, as this process sampled them.
type lineChart struct {
	Groups, Slot template.HTML
	GroupLines   []series
	// Answers charts ingest's answers between samples, by outcome.
	Answers      template.HTML
	AnswerLines  []series
	SlotLatest   *int64
	Samples      int
	Since, Until time.Time
	EverySeconds int
	NoSamplesYet bool
}

func lagCharts(h operate.ProcessSamples, now time.Time) lineChart {
	c := lineChart{Since: now.Add(-operate.OverviewWindow), Until: now, Samples: len(h.Samples), EverySeconds: h.EverySeconds,
		NoSamplesYet: len(h.Samples) == 0}
	var names []string
	for _, s := range h.Samples {
		for g := range s.Groups {
			if !slices.Contains(names, g) {
				names = append(names, g)
			}
		}
	}
	slices.Sort(names)
	ats := make([]time.Time, len(h.Samples))
	slot := series{Name: "slot", Color: seriesColors[0], Values: make([]*int64, len(h.Samples))}
	for i, s := range h.Samples {
		ats[i] = s.At
		slot.Values[i] = s.SlotLagBytes
		if s.SlotLagBytes != nil {
			c.SlotLatest = s.SlotLagBytes
		}
	}
	for k, g := range names {
		line := series{Name: g, Color: seriesColors[k%len(seriesColors)], Values: make([]*int64, len(h.Samples)), Latest: -1}
		for i, s := range h.Samples {
			if n, ok := s.Groups[g]; ok && n >= 0 {
				line.Values[i], line.Latest = &n, n
			}
		}
		c.GroupLines = append(c.GroupLines, line)
	}
	c.AnswerLines = answerLines(h)
	c.Answers = drawLines("Ingest's answers per sample interval by outcome over the last hour", "answers-chart", "in the hour", c.Since, c.Until, ats, c.AnswerLines)
	c.Groups = drawLines("Consumer lag per group over the last hour (records)", "groups-chart", "latest", c.Since, c.Until, ats, c.GroupLines)
	c.Slot = drawLines("WAL retained by the relay's slot over the last hour (bytes)", "slot-chart", "latest", c.Since, c.Until, ats, []series{slot})
	return c
}

// drawLines draws lines over [since, until] from the samples taken at ats,
// server-side, scaled to the highest value, with a title naming the
// latest values for those who do not see the lines.
func drawLines(title, id, latestIs string, since, until time.Time, ats []time.Time, lines []series) template.HTML {
	const width, height = 600, 120
	var peak int64
	for _, l := range lines {
		for _, v := range l.Values {
			if v != nil {
				peak = max(peak, *v)
			}
		}
	}
	span := until.Sub(since).Seconds()
	x := func(at time.Time) float64 { return max(0, at.Sub(since).Seconds()) / span * width }
	y := func(v int64) float64 {
		if peak == 0 {
			return height
		}
		return height - float64(v)/float64(peak)*(height-4)
	}
	var latest []string
	for _, l := range lines {
		if l.Latest >= 0 {
			latest = append(latest, fmt.Sprintf("%s %d", template.HTMLEscapeString(l.Name), l.Latest))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="%s"><title id="%s">%s: at most %d; %s: %s</title>`,
		width, height+14, width, height+14, id, id, title, peak, latestIs, strings.Join(latest, ", "))
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="1"/>`, height, width, height)
	yAxis(&b, peak, width, height)
	for _, l := range lines {
		var pts []string
		flush := func() {
			if len(pts) == 1 { // a lone sample: a dot, as a line of no length would not show
				fmt.Fprintf(&b, `<circle cx="%s" r="2" fill="%s"/>`, strings.Replace(pts[0], ",", `" cy="`, 1), l.Color)
			} else if len(pts) > 1 {
				fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`, strings.Join(pts, " "), l.Color)
			}
			pts = pts[:0]
		}
		for i, v := range l.Values {
			if v == nil {
				flush()
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(ats[i]), y(*v)))
		}
		flush()
	}
	fmt.Fprintf(&b, `<text x="0" y="%d" font-size="11" fill="#444">%s</text><text x="%d" y="%d" font-size="11" fill="#444" text-anchor="end">%s</text></svg>`,
		height+12, since.UTC().Format("15:04 UTC"), width, height+12, until.UTC().Format("15:04 UTC"))
	return template.HTML(b.String()) //nolint:gosec // numbers, fixed words and escaped group names
}

// answerLines are ingest's answers between consecutive samples, by
// outcome: the counters' differences (none across a gap, nor where a
// counter went back, a process restarted). Latest is the hour's total.
func answerLines(h operate.ProcessSamples) []series {
	var outcomes []string
	for _, s := range h.Samples {
		for o := range s.Answers {
			if !slices.Contains(outcomes, o) {
				outcomes = append(outcomes, o)
			}
		}
	}
	slices.Sort(outcomes)
	var lines []series
	for k, o := range outcomes {
		line := series{Name: o, Color: seriesColors[k%len(seriesColors)], Values: make([]*int64, len(h.Samples))}
		for i := 1; i < len(h.Samples); i++ {
			prev, okPrev := h.Samples[i-1].Answers[o]
			cur, ok := h.Samples[i].Answers[o]
			if h.Samples[i].Answers == nil || h.Samples[i-1].Answers == nil || cur < prev {
				continue
			}
			if !okPrev {
				prev = 0 // the outcome's first answer since the last sample
			}
			if ok || okPrev {
				d := cur - prev
				line.Values[i], line.Latest = &d, line.Latest+d
			}
		}
		lines = append(lines, line)
	}
	return lines
}
