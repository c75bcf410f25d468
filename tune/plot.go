package tune

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot file names, without the extension.
const (
	PlotConfirmation = "confirmation"
	PlotDisputed     = "disputed"
	PlotViewLag      = "viewlag"
	PlotTradeoff     = "tradeoff"
)

// WritePlots draws the report's four plots into dir, as PNG or SVG (format
// "png" or "svg"): confirmation vs window and disputed hits vs window, a
// line per weapon (and per combination of weapon caps swept), the
// trade-off (confirmed against disputed, a point per window), and the
// players' view-lag histogram. Windows are in ms, their ticks beside.
// It returns the files written.
func (rep *Report) WritePlots(dir, format string) ([]string, error) {
	if format != "png" && format != "svg" {
		return nil, fmt.Errorf("tune: plot format %q: png or svg", format)
	}
	var files []string
	for _, p := range []struct {
		name, title, y string
		value          func(*Row) float64
		legendTop      bool // where the lines are not
		full           bool // the y axis from 0 to 100%, else to the highest point
	}{
		{PlotConfirmation, "Hits shooters saw that the server confirms", "confirmed (% of hits seen)", func(r *Row) float64 { return 100 * r.Confirmation() }, false, true},
		{PlotDisputed, "Hits a victim could dispute (out of sight or reach in its own present)", "disputed (% of damaging hits)", func(r *Row) float64 { return 100 * r.DisputedShare() }, true, false},
	} {
		plt, err := rep.windowPlot(p.title, p.y, p.value, p.full)
		if err != nil {
			return files, err
		}
		plt.Legend.Top, plt.Legend.Left = p.legendTop, p.legendTop
		path := filepath.Join(dir, p.name+"."+format)
		if err := savePlot(plt, path, format); err != nil {
			return files, fmt.Errorf("tune: %s: %w", path, err)
		}
		files = append(files, path)
	}
	for _, p := range []struct {
		name string
		draw func() (*plot.Plot, error)
	}{{PlotTradeoff, rep.tradeoffPlot}, {PlotViewLag, rep.viewLagPlot}} {
		plt, err := p.draw()
		if err != nil {
			return files, err
		}
		path := filepath.Join(dir, p.name+"."+format)
		if err := savePlot(plt, path, format); err != nil {
			return files, fmt.Errorf("tune: %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

// windowTicks labels the x axis at each window of the sweep: its ms, and
// its ticks below (every n-th, when there are many).
func (rep *Report) windowTicks() plot.Ticker {
	seen := map[float64]bool{}
	var ticks []plot.Tick
	for _, s := range rep.Settings {
		ms, tk := rep.window(s)
		if seen[ms] || math.IsNaN(ms) {
			continue
		}
		seen[ms] = true
		ticks = append(ticks, plot.Tick{Value: ms, Label: strconv.FormatFloat(ms, 'f', -1, 64) + "\n" + tk})
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	every := (len(ticks) + 11) / 12
	for i := range ticks {
		if i%every != 0 {
			ticks[i].Label = ""
		}
	}
	return plot.ConstantTicks(ticks)
}

// tradeoffPlot draws confirmation against the disputed share, every weapon
// together: a point per window, labelled with it, a line per caps.
func (rep *Report) tradeoffPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "The trade: hits confirmed against hits disputed, a point per window"
	p.X.Label.Text = "disputed (% of damaging hits)"
	p.Y.Label.Text = "confirmed (% of hits seen)"
	p.X.Min, p.Y.Min, p.Y.Max = 0, 0, 100
	p.Add(plotter.NewGrid())
	order, byCaps := rep.byCaps()
	right := 1.0
	var series []plotter.XYLabels
	for _, c := range order {
		// Windows that trade the same share for the same share are one
		// point, labelled with their range: "600–2000 ms".
		var xy plotter.XYLabels
		var first string
		for _, r := range byCaps[c] {
			x, y := 100*r.DisputedShare(), 100*r.Confirmation()
			if math.IsNaN(x) || math.IsNaN(y) {
				continue
			}
			ms, _ := rep.window(r.Setting)
			label := strconv.FormatFloat(ms, 'f', -1, 64)
			if n := len(xy.XYs); n > 0 && xy.XYs[n-1] == (plotter.XY{X: x, Y: y}) {
				xy.Labels[n-1] = first + "–" + label + " ms"
				continue
			}
			first = label
			xy.XYs = append(xy.XYs, plotter.XY{X: x, Y: y})
			xy.Labels = append(xy.Labels, label+" ms")
			right = max(right, x)
		}
		series = append(series, xy)
	}
	p.X.Max = right * 1.2
	for i, xy := range series {
		if len(xy.XYs) == 0 {
			continue
		}
		name := "all weapons"
		if order[i] != "" {
			name += " (" + order[i] + ")"
		}
		line, points, err := plotter.NewLinePoints(xy.XYs)
		if err != nil {
			return nil, fmt.Errorf("tune: plot: %w", err)
		}
		line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		labels, err := plotter.NewLabels(xy)
		if err != nil {
			return nil, fmt.Errorf("tune: plot: %w", err)
		}
		// Beside its point, to the right; to the left when the point is
		// near the one before, whose label is on the right.
		labels.Offset = vg.Point{X: vg.Points(6)}
		for j := 1; j < len(xy.XYs); j++ {
			a, b := xy.XYs[j-1], xy.XYs[j]
			if math.Abs(a.X-b.X)/p.X.Max < 0.05 && math.Abs(a.Y-b.Y)/100 < 0.05 {
				labels.TextStyle[j].XAlign = text.XAlignment(-1 - 12/labels.TextStyle[j].Width(xy.Labels[j]).Points())
			}
		}
		p.Add(line, points, labels)
		p.Legend.Add(name, line, points)
	}
	p.Legend.Top = false
	return p, nil
}

// windowPlot draws value against the window: a line per weapon and caps.
func (rep *Report) windowPlot(title, y string, value func(*Row) float64, full bool) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "lag-compensation window (ms; ticks below)"
	p.X.Tick.Marker = rep.windowTicks()
	p.Y.Label.Text = y
	p.Y.Min, p.Y.Max = 0, 100
	p.Add(plotter.NewGrid())
	top := 1.0 // a percent at least: a flat zero is still a scale
	type series struct {
		name string
		xys  plotter.XYs
	}
	var all []*series
	for i := range rep.Rows {
		r := &rep.Rows[i]
		v := value(r)
		if math.IsNaN(v) || (r.By != ByAll && r.By != ByWeapon) {
			continue
		}
		name := r.Group
		if r.By == ByAll {
			name = "all weapons"
		}
		if c := r.Setting.caps(); c != "" {
			name += " (" + c + ")"
		}
		j := slices.IndexFunc(all, func(s *series) bool { return s.name == name })
		if j < 0 {
			all = append(all, &series{name: name})
			j = len(all) - 1
		}
		ms, _ := rep.window(r.Setting)
		all[j].xys = append(all[j].xys, plotter.XY{X: ms, Y: v})
		top = max(top, v)
	}
	if !full {
		p.Y.Max = min(100, top*1.25)
	}
	var lines []any
	for _, s := range all {
		slices.SortFunc(s.xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		lines = append(lines, s.name, s.xys)
	}
	if len(lines) == 0 {
		return p, nil // nothing to draw: the axes say so
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, fmt.Errorf("tune: plot: %w", err)
	}
	if ms := rep.recordedMS(); !math.IsNaN(ms) && slices.ContainsFunc(rep.Settings, func(s Setting) bool { w, _ := rep.window(s); return w == ms }) {
		// The window the matches were played with: a dashed upright.
		mark, err := plotter.NewLine(plotter.XYs{{X: ms, Y: 0}, {X: ms, Y: p.Y.Max}})
		if err != nil {
			return nil, fmt.Errorf("tune: plot: %w", err)
		}
		mark.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(mark)
		p.Legend.Add(fmt.Sprintf("recorded window (%s ms)", strconv.FormatFloat(ms, 'f', -1, 64)), mark)
	}
	return p, nil
}

// viewLagPlot draws the players' view-lag histogram, in about 50 bins.
func (rep *Report) viewLagPlot() (*plot.Plot, error) {
	h := &rep.ViewLag
	p := plot.New()
	p.Title.Text = fmt.Sprintf("View lag players claimed (%d inputs; p50 %.0f ms, p99 %.0f ms)", h.N, h.Quantile(0.5), h.Quantile(0.99))
	p.X.Label.Text = "view lag (ms)"
	p.X.Min = 0
	p.Y.Label.Text = "inputs"
	if h.N == 0 {
		return p, nil
	}
	var xys plotter.XYs
	for ms, n := range h.Counts {
		if n > 0 {
			xys = append(xys, plotter.XY{X: float64(ms) + 0.5, Y: float64(n)})
		}
	}
	bins := max(1, min(50, len(h.Counts)))
	hist, err := plotter.NewHistogram(xys, bins)
	if err != nil {
		return nil, fmt.Errorf("tune: plot: %w", err)
	}
	p.Add(hist)
	return p, nil
}

// Plot sizes: the plot area, and the most legend entries drawn over it.
const (
	plotWidth, plotHeight = 8 * vg.Inch, 5 * vg.Inch
	legendInside          = 6
)

// savePlot writes p to path: 8 by 5 inches, its legend in a corner of the
// plot when it is short, else in a column to the right of the plot (as
// wide as its longest entry, and the image as tall as the column), so
// that it never covers the lines (a sweep of weapons' caps draws dozens).
func savePlot(p *plot.Plot, path, format string) error {
	w, h := plotWidth, plotHeight
	legend := p.Legend
	probe := draw.New(vgimg.New(100*vg.Inch, 100*vg.Inch))
	box := legend.Rectangle(probe)
	beside := box.Size().Y > 0 && legendEntries(legend, probe) > legendInside
	if beside {
		p.Legend = plot.NewLegend()
		w += box.Size().X + 0.3*vg.Inch
		h = max(h, box.Size().Y+0.6*vg.Inch)
	}
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return fmt.Errorf("tune: %s: %w", path, err)
	}
	dc := draw.New(c)
	if beside {
		area, side := dc, dc
		area.Max.X = dc.Min.X + plotWidth
		area.Min.Y = dc.Max.Y - plotHeight
		side.Min.X = area.Max.X + 0.2*vg.Inch
		legend.Top, legend.Left = true, true
		legend.YOffs = -0.3 * vg.Inch
		p.Draw(area)
		legend.Draw(side)
		p.Legend = legend
	} else {
		p.Draw(dc)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("tune: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tune: %w", err)
	}
	return nil
}

// legendEntries returns how many entries l holds: its height over one
// entry's.
func legendEntries(l plot.Legend, c draw.Canvas) int {
	one := plot.NewLegend()
	one.TextStyle = l.TextStyle
	one.Add("x")
	eh := one.Rectangle(c).Size().Y
	if eh <= 0 {
		return 0
	}
	return int(math.Round(float64(l.Rectangle(c).Size().Y / eh)))
}
