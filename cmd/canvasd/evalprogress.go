package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// progressWidth is the number of cells of the progress bar.
const progressWidth = 30

// progress shows an experiment's progress on w: a bar redrawn in place
// when w is a terminal, else a plain line at each change of status and
// each tenth of the results, which a CI log keeps readable.
type progress struct {
	w   io.Writer
	tty bool

	status string // the last status shown
	tenth  int    // the last tenth of the results shown, plain lines only
	drawn  bool   // a bar is on the terminal's current line
}

// newProgress returns the progress display of w.
func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w), tenth: -1}
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// update shows a reading of the experiment.
func (p *progress) update(x *wire.Experiment) {
	done, total := x.Progress.Done, x.Progress.Total
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", bar(x))
		p.drawn = true
		return
	}
	tenth := 10
	if total > 0 {
		tenth = done * 10 / total
	}
	if x.Status == p.status && tenth == p.tenth {
		return
	}
	p.status, p.tenth = x.Status, tenth
	fmt.Fprintf(p.w, "canvasd eval: experiment %s %s: %d/%d results\n", x.ID, x.Status, done, total)
}

// note shows a message between readings.
func (p *progress) note(msg string) {
	p.endLine()
	fmt.Fprintf(p.w, "canvasd eval: %s\n", msg)
}

// done ends the display after the last reading, x (nil when there was
// none).
func (p *progress) done(x *wire.Experiment) {
	if x != nil && !x.Terminal() {
		p.update(x)
	}
	p.endLine()
}

// endLine ends the line the bar is drawn on.
func (p *progress) endLine() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// bar draws a reading: "[#########.....] 30/50 running".
func bar(x *wire.Experiment) string {
	done, total := x.Progress.Done, x.Progress.Total
	full := progressWidth
	if total > 0 {
		full = min(done*progressWidth/total, progressWidth)
	}
	return fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("#", full), strings.Repeat(".", progressWidth-full),
		done, total, x.Status)
}
