package main

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
)

// progress reports an evaluation's status on stderr while the command
// waits for it: on a terminal, one line redrawn in place with the status
// and the elapsed time; otherwise, one plain line per status change, which
// a CI log keeps readable, and one after each quietFor without a change.
type progress struct {
	io    *IOStreams
	label string
	start time.Time
	// quietFor is the longest a plain display stays silent.
	quietFor time.Duration

	mu      sync.Mutex
	status  string
	live    bool
	printed time.Time // when the last plain line was written

	stop chan struct{}
	done chan struct{}
}

// redrawEvery is how often the live line's elapsed time is redrawn.
const redrawEvery = 200 * time.Millisecond

// quietFor is the longest the plain display stays silent while the status
// does not change: CI services end a job that writes nothing for a while
// (CircleCI after 10 minutes, Travis CI after 10), and an evaluation of a
// large test set can stay EVALUATION_STARTED longer than that.
const quietFor = time.Minute

// startProgress starts reporting on an evaluation, named by label.
func startProgress(streams *IOStreams, label string) *progress {
	return startProgressQuiet(streams, label, quietFor)
}

// startProgressQuiet is startProgress with the plain display's longest
// silence, for tests.
func startProgressQuiet(streams *IOStreams, label string, quiet time.Duration) *progress {
	now := time.Now()
	p := &progress{io: streams, label: cell(label), start: now, quietFor: quiet, status: "waiting", live: streams.IsStderrTTY(),
		printed: now, stop: make(chan struct{}), done: make(chan struct{})}
	if !p.live {
		go p.keepAlive()
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

// keepAlive repeats the plain line when the status has not changed for
// quietFor, until Stop.
func (p *progress) keepAlive() {
	defer close(p.done)
	t := time.NewTicker(p.quietFor / 4)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			quiet := time.Since(p.printed) >= p.quietFor
			p.mu.Unlock()
			if quiet {
				p.line()
			}
		}
	}
}

// OnStatus takes a status read by WaitEvaluation.
func (p *progress) OnStatus(status models.Result) {
	p.mu.Lock()
	p.status = string(status.EvaluationStatus())
	p.mu.Unlock()
	if !p.live {
		p.line()
	} else {
		p.draw()
	}
}

// OnRetry takes a failed read that WaitEvaluation rides out, and says so
// on a line of its own, on the live display too: the wait goes on until
// --timeout, and a CI log shows why it takes long.
func (p *progress) OnRetry(r agenta.WaitRetry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("%s: %s (%s in a row); reading again in %s, until --timeout",
		p.label, retryReason(r.Err), plural(r.Failures, "failed read"), r.Wait.Round(10*time.Millisecond))
	if p.live {
		// Over the live line, which the next draw puts back below.
		fmt.Fprintf(p.io.ErrOut, "\r\x1b[K%s\n", line)
		return
	}
	p.printed = time.Now()
	fmt.Fprintln(p.io.ErrOut, line)
}

// retryReason says in a few words why a read failed: the status the
// server answered, or what happened to the connection. It holds no server
// text, so a progress line never carries more than ids and statuses.
func retryReason(err error) string {
	var apiErr *agenta.APIError
	switch {
	case errors.As(err, &apiErr):
		return fmt.Sprintf("the server answered %d %s", apiErr.StatusCode, http.StatusText(apiErr.StatusCode))
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the server refused the connection"
	case errors.Is(err, agenta.ErrAnswerCut):
		return "the answer was cut short"
	case errors.Is(err, agenta.ErrIdleTimeout):
		return "the answer stalled"
	case errors.Is(err, agenta.ErrAttemptTimeout):
		return "no answer in time"
	case errors.Is(err, agenta.ErrNoResponse):
		return "no answer: the connection broke"
	}
	return "a read failed"
}

// plural writes a count of things: "1 row", "2 rows".
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// line writes the plain display's line.
func (p *progress) line() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printed = time.Now()
	fmt.Fprintf(p.io.ErrOut, "%s: %s after %s\n", p.label, cell(p.status), p.elapsed())
}

// Stop ends the display; a live line is left on screen in its last state.
func (p *progress) Stop() {
	close(p.stop)
	<-p.done
	if !p.live {
		return
	}
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
	line := text.Clip(p.label, max(room, 0)) + tail
	fmt.Fprintf(p.io.ErrOut, "\r\x1b[K%s", text.Clip(line, max(p.io.errorWidth()-1, 0)))
}

func (p *progress) elapsed() time.Duration {
	return time.Since(p.start).Round(100 * time.Millisecond)
}
