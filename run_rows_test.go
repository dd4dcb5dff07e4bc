package agenta

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lyingRun serves a run of one scenario whose answers the test shapes.
func lyingRun(t *testing.T, repeats int, results, testcases http.HandlerFunc) *Client {
	mux, c := setup(t)
	mux.HandleFunc("/evaluations/runs/run1", answerJSON(fmt.Sprintf(`{"count":1,"run":{"id":"run1","status":"success","flags":{},"data":{"repeats":%d,"steps":[
		{"key":"testset-x","type":"input","origin":"auto","references":{"testset_revision":{"id":"tsr"}}},
		{"key":"application-y","type":"invocation","origin":"auto"}]}}}`, repeats)))
	mux.HandleFunc("/testsets/revisions/retrieve", answerJSON(`{"count":1,"testset_revision":{"id":"tsr","data":{"testcase_ids":["t1"]}}}`))
	mux.HandleFunc("/evaluations/scenarios/query", answerJSON(`{"count":1,"scenarios":[{"id":"s1","run_id":"run1","status":"success"}]}`))
	mux.HandleFunc("/evaluations/results/query", results)
	mux.HandleFunc("/testcases/query", testcases)
	mux.HandleFunc("/traces/", answerJSON(`{"count":0,"traces":[]}`))
	return c
}

var oneCell = answerJSON(`{"count":1,"results":[
	{"id":"c1","run_id":"run1","scenario_id":"s1","step_key":"testset-x","repeat_idx":0,"status":"success","testcase_id":"t1"}]}`)

var oneTestcase = answerJSON(`{"count":1,"testcases":[{"id":"t1","data":{"q":"x"}}]}`)

// A run that claims a huge number of repeats must not make the reader
// allocate for them, nor panic.
func TestRunRowsRepeatsBounded(t *testing.T) {
	for _, repeats := range []int{1 << 40, 1 << 62} {
		c := lyingRun(t, repeats, oneCell, oneTestcase)
		n := 0
		var err error
		for _, e := range c.StreamRunRows(context.Background(), "run1", &RunRowsOptions{TraceRetryWait: -1}) {
			if e != nil {
				err = e
				break
			}
			n++
			if n > 100000 {
				break
			}
		}
		require.Error(t, err, "repeats %d: a run claiming that many repeats is refused, not read (got %d rows)", repeats, n)
		var de *DecodeError
		assert.ErrorAs(t, err, &de)
		assert.Contains(t, err.Error(), "repeats")
	}
}

// Cells of a scenario the page did not ask for (a server that ignores
// scenario_ids) are an error, not kept: else each page would hold the whole
// run.
func TestRunRowsCellsNotAskedFor(t *testing.T) {
	results := answerJSON(`{"count":2,"results":[
	{"id":"c1","run_id":"run1","scenario_id":"s1","step_key":"testset-x","repeat_idx":0,"status":"success","testcase_id":"t1"},
	{"id":"c2","run_id":"run1","scenario_id":"s9","step_key":"testset-x","repeat_idx":0,"status":"success","testcase_id":"t9"}]}`)
	c := lyingRun(t, 1, results, oneTestcase)
	_, err := collectAll(c.StreamRunRows(context.Background(), "run1", &RunRowsOptions{TraceRetryWait: -1}))
	require.Error(t, err)
	var de *DecodeError
	assert.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "s9")
}

// More cells for a scenario than the run's steps and repeats make is an
// error: a server sending cells without end cannot grow the page.
func TestRunRowsTooManyCells(t *testing.T) {
	var items []string
	for i := 0; i < 50; i++ {
		items = append(items, fmt.Sprintf(`{"id":"c%03d","run_id":"run1","scenario_id":"s1","step_key":"testset-x","repeat_idx":%d,"status":"success","testcase_id":"t1"}`, i, i))
	}
	results := answerJSON(fmt.Sprintf(`{"count":%d,"results":[%s]}`, len(items), strings.Join(items, ",")))
	c := lyingRun(t, 1, results, oneTestcase)
	_, err := collectAll(c.StreamRunRows(context.Background(), "run1", &RunRowsOptions{TraceRetryWait: -1}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cells")
}

// Test cases not asked for, page after page with new cursors, end the read
// with an error instead of looping for ever.
func TestRunRowsTestcasesNotAskedFor(t *testing.T) {
	page := 0
	testcases := func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			IDs []string `json:"testcase_ids"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		page++
		if page > 50 {
			t.Errorf("page %d of test cases asked for: the read loops", page)
			answerJSON(`{"count":0,"testcases":[]}`)(w, r)
			return
		}
		var items []string
		for i := 0; i <= len(q.IDs); i++ {
			items = append(items, fmt.Sprintf(`{"id":"x%d-%d","data":{"q":"x"}}`, page, i))
		}
		answerJSON(fmt.Sprintf(`{"count":%d,"testcases":[%s],"windowing":{"next":"x%d","limit":%d}}`, len(items), strings.Join(items, ","), page, len(items)))(w, r)
	}
	c := lyingRun(t, 1, oneCell, testcases)
	_, err := collectAll(c.StreamRunRows(context.Background(), "run1", &RunRowsOptions{TraceRetryWait: -1}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not asked for")
}
