package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"os"

	"github.com/agenta-go/agenta/internal/scenariojson"
	"github.com/agenta-go/agenta/models"
)

// rowFile keeps a run's scenarios while they stream, one JSON object a
// line, so that eval run writes reports that hold every row (CSV, JSON
// Lines, JUnit) in memory that does not grow with the run: the reports
// read the rows back through evals.Run.Rows, once per pass. The first
// rowsInMemory bytes stay in memory, so that a small run needs no
// temporary directory (a missing or full $TMPDIR then never costs its
// verdict); beyond, they go to a temporary file, private to the process
// (0600) and removed at once where the system allows an open file to be,
// so that not even a killed run leaves the server's data behind.
type rowFile struct {
	mem     *bytes.Buffer // the rows, until they outgrow rowsInMemory
	f       *os.File      // then the file that holds them
	w       *bufio.Writer
	enc     *json.Encoder
	size    int64 // known once finished
	removed bool
	err     error // the first write that failed; the file is then unusable
}

// rowsInMemory is how many bytes of rows a rowFile keeps in memory before
// it moves them to a file: about a thousand rows of the usual size.
const rowsInMemory = 1 << 20

// newRowFile creates an empty rowFile, in memory.
func newRowFile() (*rowFile, error) {
	rf := &rowFile{mem: new(bytes.Buffer)}
	rf.encodeTo(rf.mem)
	return rf, nil
}

func (rf *rowFile) encodeTo(w io.Writer) {
	rf.enc = json.NewEncoder(w)
	rf.enc.SetEscapeHTML(false)
}

// add appends a scenario.
func (rf *rowFile) add(s *models.EvaluationScenario) error {
	if rf.err != nil {
		return rf.err
	}
	// Encode writes the object and a newline; the object holds no other.
	rf.err = rf.enc.Encode(s)
	if rf.err == nil && rf.mem != nil && rf.mem.Len() > rowsInMemory {
		rf.err = rf.spill()
	}
	return rf.err
}

// spill moves the rows from memory to a temporary file, which takes the
// rest.
func (rf *rowFile) spill() error {
	f, err := os.CreateTemp("", "agenta-rows-*.jsonl")
	if err != nil {
		return err
	}
	rf.f, rf.w = f, bufio.NewWriterSize(f, 64<<10)
	rf.removed = os.Remove(f.Name()) == nil
	if _, err := rf.mem.WriteTo(rf.w); err != nil {
		return err
	}
	rf.mem = nil
	rf.encodeTo(rf.w)
	return nil
}

// finish writes out what add buffered; the rows can then be read.
func (rf *rowFile) finish() error {
	if rf.err == nil && rf.mem != nil {
		rf.size = int64(rf.mem.Len())
		return nil
	}
	if rf.err == nil {
		rf.err = rf.w.Flush()
	}
	if rf.err == nil {
		rf.size, rf.err = rf.f.Seek(0, io.SeekCurrent)
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
		var src io.ReaderAt = rf.f
		if rf.mem != nil {
			src = bytes.NewReader(rf.mem.Bytes())
		}
		r := bufio.NewReaderSize(io.NewSectionReader(src, 0, rf.size), 64<<10)
		var long []byte // a line longer than r's buffer, gathered
		for {
			line, err := r.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				long = append(long[:0], line...)
				for errors.Is(err, bufio.ErrBufferFull) {
					line, err = r.ReadSlice('\n')
					long = append(long, line...)
				}
				line = long
			}
			if errors.Is(err, io.EOF) && len(line) == 0 {
				return
			}
			if err != nil && !errors.Is(err, io.EOF) {
				yield(models.EvaluationScenario{}, err)
				return
			}
			// The SDK's own decoder, several times faster than
			// encoding/json and exact; encoding/json for what it leaves.
			var s models.EvaluationScenario
			if _, status := scenariojson.Decode(line, &s); status != scenariojson.OK {
				s = models.EvaluationScenario{}
				if err := json.Unmarshal(line, &s); err != nil {
					yield(s, err)
					return
				}
			}
			if !yield(s, nil) {
				return
			}
		}
	}
}

// close closes the file and removes it.
func (rf *rowFile) close() {
	if rf.f == nil {
		rf.mem = nil
		return
	}
	rf.f.Close()
	if !rf.removed {
		os.Remove(rf.f.Name())
	}
}
