package main

import (
	"fmt"
	"io"
	"time"

	"github.com/agenta-go/agenta/models"
)

// maxBatches2024 is the most batches eval run asks of a mid-2024 server:
// its worker's batch loop recurses once a batch, and near 980 batches it
// raises a RecursionError and the run fails (seen on the real server).
const maxBatches2024 = 950

// rateLimit is the pacing eval run asks for: --batch-size rows at a time,
// --batch-delay apart (whole seconds, as the mid-2024 service takes them);
// retries as the service's own web UI asks.
func (o *EvalRunOptions) rateLimit() models.RateLimit {
	rl := models.DefaultRateLimit()
	rl.BatchSize, rl.DelayBetweenBatches = o.BatchSize, int(o.BatchDelay/time.Second)
	return rl
}

// checkPacing refuses a pacing the service cannot take.
func (o *EvalRunOptions) checkPacing() error {
	switch {
	case o.BatchSize < 1:
		return usageErrorf("--batch-size %d: want 1 or more rows a batch", o.BatchSize)
	case o.BatchDelay < 0:
		return usageErrorf("--batch-delay %s: want 0s or more", o.BatchDelay)
	case o.BatchDelay%time.Second != 0:
		return usageErrorf("--batch-delay %s: the service takes whole seconds; write %s or %s",
			o.BatchDelay, o.BatchDelay.Truncate(time.Second), o.BatchDelay.Truncate(time.Second)+time.Second)
	}
	return nil
}

// checkRepeats refuses a count of repeats or a confidence level that
// cannot be used.
func (o *EvalRunOptions) checkRepeats() error {
	switch {
	case o.Repeats < 1 || o.Repeats > models.MaxRepeats:
		return usageErrorf("--repeats %d: want 1 (each test case once) to %d", o.Repeats, models.MaxRepeats)
	case !(o.Confidence > 0.5 && o.Confidence < 1):
		return usageErrorf("--confidence %g: want a level above 0.5 and below 1, such as 0.95", o.Confidence)
	}
	return nil
}

// pacing says, before the run, what its pacing implies on the server the
// preflight found, and refuses one the server cannot run: on a mid-2024
// server, rows in batches a given delay apart take at least (batches − 1)
// delays, and more than maxBatches2024 batches break its worker; a 2026
// server runs --batch-size rows at a time, with no pause between them.
func (o *EvalRunOptions) pacing(w io.Writer, report *models.PreflightReport) error {
	rl := o.rateLimit()
	if report.Generation == "2026" {
		if o.flags != nil && o.flags.Changed("batch-delay") && o.BatchDelay > 0 {
			fmt.Fprintf(w, "agenta: --batch-delay %s: a 2026 server has no pause between batches (it runs %d rows at a time); not sent\n", o.BatchDelay, rl.BatchSize)
		}
		if o.Repeats > 1 {
			fmt.Fprintf(w, "agenta: %s: the app is called once per repeat, %d calls at a time\n", o.rowsTimesRepeats(report.Rows), rl.BatchSize)
		}
		return nil
	}
	if o.Repeats > 1 {
		fmt.Fprintf(w, "agenta: --repeats %d: a mid-2024 server has no repeats: %d evaluations of each variant are created, read as one run of %s\n",
			o.Repeats, o.Repeats, o.rowsTimesRepeats(report.Rows))
	}
	if report.Rows == 0 {
		return nil // not read: nothing to say
	}
	// Each repeat is an evaluation of its own, paced alone: the batch
	// limit and the pauses are per evaluation.
	batches := (report.Rows + rl.BatchSize - 1) / rl.BatchSize
	if batches > maxBatches2024 {
		return usageErrorf("--batch-size %d: %d rows make %d batches, and the mid-2024 service's worker fails near 980 (a RecursionError): use --batch-size %d or more",
			rl.BatchSize, report.Rows, batches, (report.Rows+maxBatches2024-1)/maxBatches2024)
	}
	if least := time.Duration(batches-1) * time.Duration(rl.DelayBetweenBatches) * time.Second; least >= time.Second {
		each := ""
		if o.Repeats > 1 {
			each = fmt.Sprintf(" per evaluation, %d evaluations per variant", o.Repeats)
		}
		fmt.Fprintf(w, "agenta: %d rows in batches of %d, %d s apart: at least %s of pacing%s (set --batch-size and --batch-delay)\n",
			report.Rows, rl.BatchSize, rl.DelayBetweenBatches, roughly(least), each)
	}
	return nil
}

// rowsTimesRepeats says how many rows the run makes: "5 rows × 3
// repeats", or "3 repeats of each row" when the preflight did not count
// them.
func (o *EvalRunOptions) rowsTimesRepeats(rows int) string {
	if rows == 0 {
		return fmt.Sprintf("%d repeats of each row", o.Repeats)
	}
	return fmt.Sprintf("%s × %d repeats", plural(rows, "row"), o.Repeats)
}

// roughly writes a duration for people: seconds under two minutes, then
// whole minutes.
func roughly(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%d s", int(d/time.Second))
	}
	return fmt.Sprintf("%d min", int(d/time.Minute))
}
