package main

import (
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// progress reports an evaluation's status on stderr while the command
// waits for it: on a terminal, one line redrawn in place with the status
// and the elapsed time; otherwise, one plain line per status change, which
// a CI log keeps readable.
type progress struct {
	io    *IOStreams
	label string
	start time.Time

	mu     sync.Mutex
	status string
	live   bool

	stop chan struct{}
	done chan struct{}
}

// redrawEvery is how often the live line's elapsed time is redrawn.
const redrawEvery = 200 * time.Millisecond

// startProgress starts reporting on an evaluation, named by label.
func startProgress(streams *IOStreams, label string) *progress {
	p := &progress{io: streams, label: cell(label), start: time.Now(), status: "waiting", live: streams.IsStderrTTY(),
		stop: make(chan struct{}), done: make(chan struct{})}
	if !p.live {
		close(p.done)
		return p
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(redrawEvery)
		defer t.Stop()
		for {
			p.draw()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// OnStatus takes a status read by WaitEvaluation.
func (p *progress) OnStatus(status models.Result) {
	p.mu.Lock()
	p.status = string(status.EvaluationStatus())
	p.mu.Unlock()
	if !p.live {
		fmt.Fprintf(p.io.ErrOut, "%s: %s after %s\n", p.label, cell(p.status), p.elapsed())
	} else {
		p.draw()
	}
}

// Stop ends the live line, leaving its last state on screen.
func (p *progress) Stop() {
	if !p.live {
		return
	}
	close(p.stop)
	<-p.done
	p.draw()
	fmt.Fprintln(p.io.ErrOut)
}

// draw redraws the live line. It stays narrower than the terminal, the
// label cut first: a line that wraps cannot be redrawn in place, and each
// redraw would leave a row behind.
func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	tail := ": " + cell(p.status) + "  " + p.elapsed().String()
	room := p.io.errorWidth() - 1 - utf8.RuneCountInString(tail)
	line := clipRunes(p.label, room) + tail
	fmt.Fprintf(p.io.ErrOut, "\r\x1b[K%s", clipRunes(line, p.io.errorWidth()-1))
}

// clipRunes cuts s to at most n runes, the last one an ellipsis when cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}

func (p *progress) elapsed() time.Duration {
	return time.Since(p.start).Round(100 * time.Millisecond)
}
