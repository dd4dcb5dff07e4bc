package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"os"

	"github.com/agenta-go/agenta/models"
)

// rowFile keeps a run's scenarios in a temporary file while they stream,
// one JSON object a line, so that eval run writes reports that hold every
// row (CSV, JSON Lines, JUnit) in memory that does not grow with the run:
// the reports read the rows back through evals.Run.Rows, once per pass.
// The file is private to the process (0600, in the temporary directory)
// and is removed at once where the system allows an open file to be, so
// that not even a killed run leaves the server's data behind.
type rowFile struct {
	f       *os.File
	w       *bufio.Writer
	size    int64
	removed bool
	err     error // the first write that failed; the file is then unusable
}

// newRowFile creates an empty rowFile.
func newRowFile() (*rowFile, error) {
	f, err := os.CreateTemp("", "agenta-rows-*.jsonl")
	if err != nil {
		return nil, err
	}
	rf := &rowFile{f: f, w: bufio.NewWriterSize(f, 64<<10)}
	rf.removed = os.Remove(f.Name()) == nil
	return rf, nil
}

// add appends a scenario.
func (rf *rowFile) add(s *models.EvaluationScenario) error {
	if rf.err != nil {
		return rf.err
	}
	data, err := json.Marshal(s)
	if err == nil {
		data = append(data, '\n')
		var n int
		n, err = rf.w.Write(data)
		rf.size += int64(n)
	}
	rf.err = err
	return err
}

// finish writes out what add buffered; the rows can then be read.
func (rf *rowFile) finish() error {
	if rf.err == nil {
		rf.err = rf.w.Flush()
	}
	return rf.err
}

// rows is a pass over the rows added, for evals.Run.Rows. Passes read the
// file through their own offsets, so they may overlap.
func (rf *rowFile) rows() iter.Seq2[models.EvaluationScenario, error] {
	return func(yield func(models.EvaluationScenario, error) bool) {
		if rf.err != nil {
			yield(models.EvaluationScenario{}, rf.err)
			return
		}
		dec := json.NewDecoder(bufio.NewReaderSize(io.NewSectionReader(rf.f, 0, rf.size), 64<<10))
		for {
			var s models.EvaluationScenario
			err := dec.Decode(&s)
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(s, err) || err != nil {
				return
			}
		}
	}
}

// close closes the file and removes it.
func (rf *rowFile) close() {
	rf.f.Close()
	if !rf.removed {
		os.Remove(rf.f.Name())
	}
}
