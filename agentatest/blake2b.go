package agentatest

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The 2026 service names a test case by a hash of its content, so that an
// unchanged row keeps its id: BLAKE2b of Python's json.dumps of the row,
// stamped as a version-5 UUID. The fake computes the same ids, which lets a
// test compare them with a real server's. BLAKE2b (RFC 7693) is written
// out here: golang.org/x/crypto/blake2b was measured slower and pulls
// golang.org/x/sys into the fake's graph (docs/design.md, "The fake").

var blake2bIV = [8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}

// blake2bSigma are RFC 7693's ten message permutations; the 12 rounds
// take them in turn.
var blake2bSigma = [10][16]byte{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
}

// blake2b returns the unkeyed BLAKE2b digest of msg, size bytes long (1 to 64).
func blake2b(msg []byte, size int) []byte {
	h := blake2bIV
	h[0] ^= 0x01010000 ^ uint64(size)
	var t uint64
	var block [128]byte
	for len(msg) > 128 {
		copy(block[:], msg[:128])
		msg = msg[128:]
		t += 128
		blake2bCompress(&h, &block, t, false)
	}
	block = [128]byte{}
	copy(block[:], msg)
	t += uint64(len(msg))
	blake2bCompress(&h, &block, t, true)
	var out [64]byte
	for i, v := range h {
		binary.LittleEndian.PutUint64(out[8*i:], v)
	}
	return out[:size]
}

func blake2bCompress(h *[8]uint64, block *[128]byte, t uint64, last bool) {
	var m [16]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(block[8*i:])
	}
	var v [16]uint64
	copy(v[:8], h[:])
	copy(v[8:], blake2bIV[:])
	v[12] ^= t
	if last {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint64) {
		v[a] = v[a] + v[b] + x
		v[d] = bits.RotateLeft64(v[d]^v[a], -32)
		v[c] = v[c] + v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -24)
		v[a] = v[a] + v[b] + y
		v[d] = bits.RotateLeft64(v[d]^v[a], -16)
		v[c] = v[c] + v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -63)
	}
	for round := range 12 {
		s := blake2bSigma[round%10]
		g(0, 4, 8, 12, m[s[0]], m[s[1]])
		g(1, 5, 9, 13, m[s[2]], m[s[3]])
		g(2, 6, 10, 14, m[s[4]], m[s[5]])
		g(3, 7, 11, 15, m[s[6]], m[s[7]])
		g(0, 5, 10, 15, m[s[8]], m[s[9]])
		g(1, 6, 11, 12, m[s[10]], m[s[11]])
		g(2, 7, 8, 13, m[s[12]], m[s[13]])
		g(3, 4, 9, 14, m[s[14]], m[s[15]])
	}
	for i := range h {
		h[i] ^= v[i] ^ v[i+8]
	}
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
	return dashed(hex.EncodeToString(sum))
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

// pythonEscapes are the characters Python's json writes as a backslash
// and a letter.
var pythonEscapes = [0x80]byte{'"': '"', '\\': '\\', '\n': 'n', '\r': 'r', '\t': 't', '\b': 'b', '\f': 'f'}

// appendPythonString writes s as Python's json module does by default:
// ASCII only, \uXXXX for the rest (surrogate pairs beyond the BMP).
func appendPythonString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r < 0x80 && pythonEscapes[r] != 0:
			b = append(b, '\\', pythonEscapes[r])
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
