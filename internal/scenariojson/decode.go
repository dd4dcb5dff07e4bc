// Package scenariojson decodes the service's evaluation scenarios several
// times faster than encoding/json, with exactly its results.
//
// Scenario lists are the one large answer of the service: an evaluation can
// hold 100,000 rows. encoding/json decodes them through reflection and scans
// every byte twice; this package parses one scenario in one pass with plain
// Go (no unsafe, no assembly, so it runs on every platform Go supports).
//
// It is deliberately partial. It handles exactly the JSON it can decode
// exactly as encoding/json would (surrogate pairs in escapes included, and
// lone surrogates turned into U+FFFD as encoding/json does), and reports
// anything else (invalid JSON, a value of the wrong type, an escaped,
// case-variant or duplicate key, nesting deeper than 512 levels) as Invalid,
// so that the caller decodes that input with encoding/json instead. A differential fuzz
// test in the agenta package holds the two to identical values and errors.
package scenariojson

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// Status is the outcome of Decode.
type Status int

// Decode outcomes.
const (
	// OK means the scenario was decoded exactly as encoding/json decodes it.
	OK Status = iota
	// Short means the input ended before the scenario did: decode again
	// with more input.
	Short
	// Invalid means the input is something this package does not decode;
	// decode it with encoding/json.
	Invalid
)

// maxDepth bounds the nesting of free-form values (Result.value,
// Input.value, unknown fields) that Decode accepts.
const maxDepth = 512

// Decode decodes the JSON object at the start of data into s, which must be
// the zero value, and returns the number of bytes the object took. Anything
// after the object is not read. On Short or Invalid, s holds partial results
// and must be reset before reuse.
func Decode(data []byte, s *models.EvaluationScenario) (int, Status) {
	d := decoder{b: data}
	if !d.scenario(s) {
		if d.short {
			return 0, Short
		}
		return 0, Invalid
	}
	return d.i, OK
}

type decoder struct {
	b     []byte
	i     int
	short bool // the input ended too early
}

// fail records why parsing stopped: at the end of the input, more input may
// help; anywhere else it will not.
func (d *decoder) fail() bool {
	if d.i >= len(d.b) {
		d.short = true
	}
	return false
}

func (d *decoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips whitespace and returns the next byte, or 0 at the end.
func (d *decoder) next() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// literal consumes lit (null, true or false) if the input starts with it.
func (d *decoder) literal(lit string) bool {
	rest := d.b[d.i:]
	if len(rest) >= len(lit) {
		if string(rest[:len(lit)]) == lit {
			d.i += len(lit)
			return true
		}
		return false
	}
	if string(rest) == lit[:len(rest)] {
		d.i = len(d.b)
		d.short = true
	}
	return false
}

// null consumes a null literal if one comes next.
func (d *decoder) null() bool {
	return d.next() == 'n' && d.literal("null")
}

// more consumes the separator after a member or element: it reports true
// after a comma, false after the closing delimiter.
func (d *decoder) more(closing byte) (more, ok bool) {
	switch d.next() {
	case ',':
		d.i++
		return true, true
	case closing:
		d.i++
		return false, true
	}
	return false, d.fail()
}

// unknown skips the value of a member whose name matched no field. It
// refuses the name if encoding/json would still match it to a field
// case-insensitively (with Unicode folding, so any non-ASCII name is
// refused too).
func (d *decoder) unknown(name []byte, fields ...string) bool {
	for _, c := range name {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	for _, f := range fields {
		if len(f) == len(name) && bytes.EqualFold(name, []byte(f)) {
			return false
		}
	}
	return d.skip(0)
}

// seen marks field bit as decoded; a duplicate name is refused, since
// encoding/json merges repeated members in ways not worth copying.
func seen(set *uint32, bit uint32) bool {
	if *set&bit != 0 {
		return false
	}
	*set |= bit
	return true
}

const (
	hi8 = 0x8080808080808080
	lo8 = 0x0101010101010101
)

// plain8 reports whether 8 bytes hold no quote, backslash, control
// character or non-ASCII byte (SWAR, with encoding/binary: no unsafe).
func plain8(x uint64) bool {
	quote := x ^ (lo8 * '"')
	slash := x ^ (lo8 * '\\')
	special := (quote - lo8) &^ quote
	special |= (slash - lo8) &^ slash
	special |= x - lo8*0x20 // bytes < 0x20 borrow into their high bit
	special |= x            // non-ASCII bytes have the high bit set
	return special&hi8 == 0
}

// str reads a JSON string as encoding/json decodes it into a Go string.
func (d *decoder) str() (string, bool) {
	if d.next() != '"' {
		return "", d.fail()
	}
	b := d.b
	start := d.i + 1
	j := start
	for j+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[j:])) {
		j += 8
	}
	ascii := true
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			raw := b[start:j]
			if !ascii && !utf8.Valid(raw) {
				return d.unquote(start) // encoding/json coerces bad UTF-8 to U+FFFD
			}
			d.i = j + 1
			return string(raw), true
		case c == '\\':
			return d.unquote(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	d.i = len(b)
	return "", d.fail()
}

// unquote decodes a string with escapes or invalid UTF-8 starting at
// start, following encoding/json's unquoteBytes.
func (d *decoder) unquote(start int) (string, bool) {
	b := d.b
	out := make([]byte, 0, 64)
	r := start
	for r < len(b) {
		c := b[r]
		switch {
		case c == '"':
			d.i = r + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c == '\\':
			if r+1 >= len(b) {
				d.i = len(b)
				return "", d.fail()
			}
			switch b[r+1] {
			case '"', '\\', '/':
				out = append(out, b[r+1])
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				rr, ok := hex4(b, r)
				if !ok {
					return "", d.failAt(r+6 > len(b))
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					// A pair needs the next escape; at the end of the input
					// we cannot tell, so ask for more.
					if r+6 > len(b) {
						d.i = len(b)
						return "", d.fail()
					}
					rr1, ok := hex4(b, r)
					if ok {
						if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
							r += 6
							out = utf8.AppendRune(out, dec)
							continue
						}
					} else if b[r] == '\\' && b[r+1] == 'u' {
						return "", false // a bad escape: invalid JSON
					}
					rr = utf8.RuneError
				}
				out = utf8.AppendRune(out, rr)
				continue
			default:
				return "", false
			}
			r += 2
		case c < utf8.RuneSelf:
			out = append(out, c)
			r++
		default:
			rr, size := utf8.DecodeRune(b[r:])
			if rr == utf8.RuneError && size == 1 && !utf8.FullRune(b[r:]) {
				d.i = len(b) // a rune cut by the end of the input
				return "", d.fail()
			}
			out = utf8.AppendRune(out, rr)
			r += size
		}
	}
	d.i = len(b)
	return "", d.fail()
}

// failAt reports a failure that more input may fix when atEnd.
func (d *decoder) failAt(atEnd bool) bool {
	if atEnd {
		d.short = true
	}
	return false
}

// hex4 reads the escape \uXXXX at b[r:].
func hex4(b []byte, r int) (rune, bool) {
	if r+6 > len(b) || b[r] != '\\' || b[r+1] != 'u' {
		return 0, false
	}
	var v rune
	for _, c := range b[r+2 : r+6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v*16 + rune(c)
	}
	return v, true
}

// stringField decodes a string or null (which leaves *p alone) into *p.
func (d *decoder) stringField(p *string) bool {
	if d.null() {
		return true
	}
	if d.short {
		return false
	}
	s, ok := d.str()
	*p = s
	return ok
}

// boolField decodes true, false or null (which leaves *p alone).
func (d *decoder) boolField(p *bool) bool {
	switch d.next() {
	case 'n':
		return d.literal("null")
	case 't':
		*p = true
		return d.literal("true")
	case 'f':
		*p = false
		return d.literal("false")
	}
	return d.fail()
}

// number consumes a JSON number, strictly by the grammar.
func (d *decoder) number() bool {
	b := d.b
	i := d.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		d.i = i
		return d.fail()
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		for i++; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) {
			d.i = i
			return d.fail()
		}
		if b[i] < '0' || b[i] > '9' {
			return false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) {
			d.i = i
			return d.fail()
		}
		if b[i] < '0' || b[i] > '9' {
			return false
		}
		for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		}
	}
	d.i = i
	// A number is only known to be complete when something follows it.
	return i < len(b) || d.fail()
}

// floatField decodes a number or null (which leaves *p nil) into *p.
func (d *decoder) floatField(p **float64) bool {
	switch c := d.next(); {
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
	default:
		return d.fail()
	}
	start := d.i
	if !d.number() {
		return false
	}
	f, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	if err != nil {
		return false // out of range: encoding/json reports a type error
	}
	*p = &f
	return true
}

// skip consumes any JSON value, validating it as encoding/json's scanner
// does (strings are not checked for UTF-8, as the scanner does not).
func (d *decoder) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch c := d.next(); {
	case c == '"':
		return d.skipString()
	case c == '{':
		d.i++
		if d.next() == '}' {
			d.i++
			return true
		}
		for {
			if d.next() != '"' {
				return d.fail()
			}
			if !d.skipString() {
				return false
			}
			if d.next() != ':' {
				return d.fail()
			}
			d.i++
			if !d.skip(depth + 1) {
				return false
			}
			more, ok := d.more('}')
			if !ok {
				return false
			}
			if !more {
				return true
			}
		}
	case c == '[':
		d.i++
		if d.next() == ']' {
			d.i++
			return true
		}
		for {
			if !d.skip(depth + 1) {
				return false
			}
			more, ok := d.more(']')
			if !ok {
				return false
			}
			if !more {
				return true
			}
		}
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	}
	return d.fail()
}

// skipString consumes a string, checking its escapes and that it has no
// control characters.
func (d *decoder) skipString() bool {
	b := d.b
	j := d.i + 1
	for {
		for j+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		if j >= len(b) {
			d.i = j
			return d.fail()
		}
		switch c := b[j]; {
		case c == '"':
			d.i = j + 1
			return true
		case c == '\\':
			if j+1 >= len(b) {
				d.i = len(b)
				return d.fail()
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if _, ok := hex4(b, j); !ok {
					if j+6 > len(b) {
						d.i = len(b)
						return d.fail()
					}
					return false
				}
				j += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			j++
		}
	}
}

// raw decodes any value into a json.RawMessage, as encoding/json does: a
// copy of its bytes, null included.
func (d *decoder) raw(p *[]byte) bool {
	d.ws()
	start := d.i
	if !d.skip(0) {
		return false
	}
	*p = append([]byte(nil), d.b[start:d.i]...)
	return true
}

// object decodes an object, handing each member's name to field, which
// decodes the member's value. field marks each field it decodes in a set
// with seen, and passes a name it does not know to d.unknown. Names with
// escapes are refused: encoding/json matches them after unescaping.
//
// object only calls field, so the closures passed to it stay on the stack;
// it reads names itself, so that a member costs one call (to field), which
// keeps the decoder within a few percent of one loop written per type.
func (d *decoder) object(field func(name []byte) bool) bool {
	if d.next() != '{' {
		return d.fail()
	}
	d.i++
	if d.next() == '}' {
		d.i++
		return true
	}
	for {
		// The member's name and its colon.
		if d.next() != '"' {
			return d.fail()
		}
		start := d.i + 1
		end := bytes.IndexByte(d.b[start:], '"')
		if end < 0 {
			d.i = len(d.b)
			return d.fail()
		}
		name := d.b[start : start+end]
		for _, c := range name {
			if c == '\\' || c < 0x20 {
				return false
			}
		}
		d.i = start + end + 1
		if d.next() != ':' {
			return d.fail()
		}
		d.i++
		if !field(name) {
			return false
		}
		more, ok := d.more('}')
		if !more {
			return ok
		}
	}
}

// list decodes an array into *p, each element with elem, starting with
// room for capHint elements. null leaves *p alone; an empty array sets an
// empty, non-nil slice, as encoding/json does.
func list[T any](d *decoder, p *[]T, capHint int, elem func(*T) bool) bool {
	switch d.next() {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return d.fail()
	}
	d.i++
	if d.next() == ']' {
		d.i++
		*p = []T{}
		return true
	}
	l := make([]T, 0, capHint)
	for {
		var zero T
		l = append(l, zero)
		if !elem(&l[len(l)-1]) {
			return false
		}
		more, ok := d.more(']')
		if !more {
			*p = l
			return ok
		}
	}
}

// The decoders of the model types. Each refuses a duplicate member (with
// seen) and a case variant of a field's name (with unknown), which
// encoding/json decodes in ways not worth copying. TestModelsInStep holds
// the lists of names to the models.

func (d *decoder) scenario(s *models.EvaluationScenario) bool {
	var set uint32
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "id":
			return seen(&set, 1<<0) && d.stringField(&s.ID)
		case "evaluation_id":
			return seen(&set, 1<<1) && d.stringField(&s.EvaluationID)
		case "inputs":
			return seen(&set, 1<<2) && list(d, &s.Inputs, 4, d.input)
		case "outputs":
			return seen(&set, 1<<3) && list(d, &s.Outputs, 1, d.output)
		case "evaluation":
			return seen(&set, 1<<4) && d.stringField(&s.Evaluation)
		case "correct_answer":
			return seen(&set, 1<<5) && d.stringField(&s.CorrectAnswer)
		case "correct_answers":
			return seen(&set, 1<<6) && list(d, &s.CorrectAnswers, 1, d.correctAnswer)
		case "is_pinned":
			return seen(&set, 1<<7) && d.boolField(&s.IsPinned)
		case "note":
			return seen(&set, 1<<8) && d.stringField(&s.Note)
		case "results":
			return seen(&set, 1<<9) && list(d, &s.Results, 4, d.scenarioResult)
		case "testcase_id":
			return seen(&set, 1<<10) && d.stringField(&s.TestcaseID)
		}
		return d.unknown(name, "id", "evaluation_id", "inputs", "outputs", "evaluation",
			"correct_answer", "correct_answers", "is_pinned", "note", "results", "testcase_id")
	})
}

func (d *decoder) input(in *models.Input) bool {
	var set uint32
	return d.null() || d.object(func(name []byte) bool {
		switch string(name) {
		case "name":
			return seen(&set, 1) && d.stringField(&in.Name)
		case "type":
			return seen(&set, 2) && d.stringField(&in.Type)
		case "value":
			return seen(&set, 4) && d.raw((*[]byte)(&in.Value))
		}
		return d.unknown(name, "name", "type", "value")
	})
}

func (d *decoder) output(out *models.Output) bool {
	var set uint32
	return d.null() || d.object(func(name []byte) bool {
		switch string(name) {
		case "result":
			return seen(&set, 1) && d.result(&out.Result)
		case "cost":
			return seen(&set, 2) && d.floatField(&out.Cost)
		case "latency":
			return seen(&set, 4) && d.floatField(&out.Latency)
		}
		return d.unknown(name, "result", "cost", "latency")
	})
}

func (d *decoder) result(r *models.Result) bool {
	var set uint32
	return d.null() || d.object(func(name []byte) bool {
		switch string(name) {
		case "type":
			return seen(&set, 1) && d.stringField(&r.Type)
		case "value":
			return seen(&set, 2) && d.raw((*[]byte)(&r.Value))
		case "error":
			return seen(&set, 4) && d.resultError(&r.Error)
		}
		return d.unknown(name, "type", "value", "error")
	})
}

// resultError decodes an object into a new Error, or null (which leaves
// *p nil).
func (d *decoder) resultError(p **models.Error) bool {
	if d.null() {
		return true
	}
	e := new(models.Error)
	*p = e
	var set uint32
	return d.object(func(name []byte) bool {
		switch string(name) {
		case "message":
			return seen(&set, 1) && d.stringField(&e.Message)
		case "stacktrace":
			return seen(&set, 2) && d.stringField(&e.Stacktrace)
		}
		return d.unknown(name, "message", "stacktrace")
	})
}

func (d *decoder) scenarioResult(r *models.ScenarioResult) bool {
	var set uint32
	return d.null() || d.object(func(name []byte) bool {
		switch string(name) {
		case "evaluator_config":
			return seen(&set, 1) && d.stringField(&r.EvaluatorConfig)
		case "result":
			return seen(&set, 2) && d.result(&r.Result)
		}
		return d.unknown(name, "evaluator_config", "result")
	})
}

func (d *decoder) correctAnswer(a *models.CorrectAnswer) bool {
	var set uint32
	return d.null() || d.object(func(name []byte) bool {
		switch string(name) {
		case "key":
			return seen(&set, 1) && d.stringField(&a.Key)
		case "value":
			return seen(&set, 2) && d.stringField(&a.Value)
		}
		return d.unknown(name, "key", "value")
	})
}
