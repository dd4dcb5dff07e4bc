package agentatest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	xblake2b "golang.org/x/crypto/blake2b"
)

// The 2026 service names a test case by a hash of its content, so that an
// unchanged row keeps its id: BLAKE2b of Python's json.dumps of the row,
// stamped as a version-5 UUID. The fake computes the same ids, which lets a
// test compare them with a real server's.

// blake2b returns the unkeyed BLAKE2b digest of msg, size bytes long (1 to
// 64). x/crypto replaced a hand-written RFC 7693 here; docs/design.md
// gives the measurement.
func blake2b(msg []byte, size int) []byte {
	h, err := xblake2b.New(size, nil)
	if err != nil {
		panic(err) // size is a constant of the caller's
	}
	h.Write(msg)
	return h.Sum(nil)
}

// blobID is the service's compute_blob_id: BLAKE2b-128 of str(set_id)
// followed by the data as sorted, compact Python JSON ("" for no data),
// stamped as a version-5 UUID. setID "" is Python's None, which str()
// spells "None".
func blobID(data []column, setID string) string {
	prefix := setID
	if prefix == "" {
		prefix = "None"
	}
	var msg []byte
	msg = append(msg, prefix...)
	if len(data) > 0 {
		msg = appendPythonObject(msg, data)
	}
	sum := blake2b(msg, 16)
	sum[6] = sum[6]&0x0f | 0x50
	sum[8] = sum[8]&0x3f | 0x80
	x := hex.EncodeToString(sum)
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

// dedupID is the testcase_dedup_id the service gives the row at index i of
// a new test set: BLAKE2b-48 of "<content id>:<i>", so that identical rows
// get different ids.
func dedupID(data []column, i int) string {
	return hex.EncodeToString(blake2b([]byte(blobID(data, "")+":"+strconv.Itoa(i)), 6))
}

// column is one member of a test-set row, its value raw JSON.
type column struct {
	name  string
	value json.RawMessage
}

// appendPythonObject appends the columns as Python's json.dumps writes
// them with sort_keys=True and separators=(",", ":"): keys sorted by code
// point, every non-ASCII character escaped (ensure_ascii).
func appendPythonObject(b []byte, cols []column) []byte {
	sorted := slices.Clone(cols)
	slices.SortStableFunc(sorted, func(x, y column) int { return compareCodePoints(x.name, y.name) })
	b = append(b, '{')
	for i, c := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPythonString(b, c.name)
		b = append(b, ':')
		b = appendPythonValue(b, c.value)
	}
	return append(b, '}')
}

// appendPythonValue re-encodes a raw JSON value the way json.dumps would.
// Numbers keep their text, which is what Python writes back for the
// numbers a test set holds.
func appendPythonValue(b []byte, raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return append(b, "null"...)
	}
	return appendPython(b, v)
}

func appendPython(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, x)
	case json.Number:
		return append(b, x...)
	case string:
		return appendPythonString(b, x)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendPython(b, e)
		}
		return append(b, ']')
	case map[string]any:
		cols := make([]column, 0, len(x))
		for k, e := range x {
			raw, _ := json.Marshal(e)
			cols = append(cols, column{k, raw})
		}
		return appendPythonObject(b, cols)
	}
	return fmt.Appendf(b, "%v", v)
}

// appendPythonString writes s as Python's json module does by default:
// ASCII only, \uXXXX for the rest (surrogate pairs beyond the BMP).
func appendPythonString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20 || r >= 0x7f && r <= 0xffff:
			b = fmt.Appendf(b, `\u%04x`, r)
		case r > 0xffff:
			hi, lo := utf16.EncodeRune(r)
			b = fmt.Appendf(b, `\u%04x\u%04x`, hi, lo)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// compareCodePoints orders strings as Python sorts them: by code point.
func compareCodePoints(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	for i := 0; i < len(ra) && i < len(rb); i++ {
		if ra[i] != rb[i] {
			return int(ra[i]) - int(rb[i])
		}
	}
	return len(ra) - len(rb)
}
