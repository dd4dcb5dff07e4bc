package agentatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agenta-go/agenta/models"
)

// This file reproduces how FastAPI and Pydantic refuse a request: the order
// fields are checked in, the coercions they allow, and the loc, msg and type
// of every error. Two dialects exist: Pydantic v1, which the published
// contract shows ({loc, msg, type}), and Pydantic v2, which newer servers run
// (adding input and url).

// pydanticVersion selects the dialect of validation errors.
type pydanticVersion int

const (
	pydanticV1 pydanticVersion = iota
	pydanticV2
)

// pydanticV2Docs is where Pydantic v2 links each error type.
const pydanticV2Docs = "https://errors.pydantic.dev/2.7/v/"

// errorKind names a failure independently of the dialect.
type errorKind int

const (
	kindMissing errorKind = iota
	kindString
	kindIntType
	kindIntParsing
	kindIntFromFloat
	kindFiniteNumber
	kindList
	kindDict
	kindModel
	kindNone
)

var v1Messages = map[errorKind][2]string{
	kindMissing:      {"field required", "value_error.missing"},
	kindString:       {"str type expected", "type_error.str"},
	kindIntType:      {"value is not a valid integer", "type_error.integer"},
	kindIntParsing:   {"value is not a valid integer", "type_error.integer"},
	kindIntFromFloat: {"value is not a valid integer", "type_error.integer"},
	kindFiniteNumber: {"value is not a valid integer", "type_error.integer"},
	kindList:         {"value is not a valid list", "type_error.list"},
	kindDict:         {"value is not a valid dict", "type_error.dict"},
	kindModel:        {"value is not a valid dict", "type_error.dict"},
	kindNone:         {"none is not an allowed value", "type_error.none.not_allowed"},
}

var v2Messages = map[errorKind][2]string{
	kindMissing:      {"Field required", "missing"},
	kindString:       {"Input should be a valid string", "string_type"},
	kindIntType:      {"Input should be a valid integer", "int_type"},
	kindIntParsing:   {"Input should be a valid integer, unable to parse string as an integer", "int_parsing"},
	kindIntFromFloat: {"Input should be a valid integer, got a number with a fractional part", "int_from_float"},
	kindFiniteNumber: {"Input should be a finite number", "finite_number"},
	kindList:         {"Input should be a valid list", "list_type"},
	kindDict:         {"Input should be a valid dictionary", "dict_type"},
	kindModel:        {"Input should be a valid dictionary or object to extract fields from", "model_attributes_type"},
}

// providerKeyNames are the values of the service's LMProvidersEnum, in its
// declaration order: the only keys lm_providers_keys accepts.
var providerKeyNames = models.ProviderKeyNames()

// validator collects the errors of one request, in the order FastAPI
// reports them.
type validator struct {
	version pydanticVersion
	errs    []validationError
}

func (v *validator) fail(loc []any, kind errorKind, input any) {
	if v.version == pydanticV2 && kind == kindNone {
		kind = kindString // v2 has no separate "none" error; callers pick the type error
	}
	table := v1Messages
	if v.version == pydanticV2 {
		table = v2Messages
	}
	m := table[kind]
	v.errs = append(v.errs, validationError{Loc: loc, Msg: m[0], Type: m[1], Input: echo(input)})
}

func (v *validator) ok() bool { return len(v.errs) == 0 }

// at returns loc extended by item, without sharing loc's backing array.
func at(loc []any, items ...any) []any {
	out := make([]any, 0, len(loc)+len(items))
	return append(append(out, loc...), items...)
}

// parseQuery splits a raw query the way Starlette does: pairs separated by
// "&", "+" as a space, lenient percent-decoding, blank values kept, and the
// last value winning for a name.
func parseQuery(raw string) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		name, value, _ := strings.Cut(pair, "=")
		out[unquote(name)] = unquote(value)
	}
	return out
}

func unquote(s string) string {
	s = strings.ReplaceAll(s, "+", " ")
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// requireQuery reports each missing query parameter, in the order given.
func (v *validator) requireQuery(q map[string]string, names ...string) {
	for _, name := range names {
		if _, ok := q[name]; !ok {
			v.fail([]any{"query", name}, kindMissing, nil)
		}
	}
}

// jsonObject is a decoded JSON object that remembers its key order, so that
// errors about its members come out in the order the client sent them.
type jsonObject struct {
	keys   []string
	values map[string]any
}

func (o *jsonObject) get(name string) (any, bool) {
	v, ok := o.values[name]
	return v, ok
}

// readBody decodes a request body as FastAPI does for a required JSON model,
// or reports why it cannot: a missing body, a body that is not JSON, or a
// Content-Type that is not JSON.
func (v *validator) readBody(body []byte, contentType string) (any, bool) {
	if len(body) == 0 {
		v.fail([]any{"body"}, kindMissing, nil)
		return nil, false
	}
	if contentType != "" {
		mediaType, _, err := mime.ParseMediaType(contentType)
		if err != nil || !(mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")) {
			// FastAPI leaves such a body as raw bytes, which no model accepts.
			v.fail([]any{"body"}, kindModel, string(body))
			return nil, false
		}
	}
	// Python's json module also reads NaN, Infinity and -Infinity. (A
	// syntax error after one of them is placed a few characters off.)
	text := pythonConstants(body)
	if err := json.Unmarshal(text, new(json.RawMessage)); err != nil {
		v.errs = append(v.errs, v.jsonDecodeError(body, err))
		return nil, false
	}
	doc, err := decodeOrdered(text)
	if err != nil { // cannot happen after a successful Unmarshal
		v.errs = append(v.errs, v.jsonDecodeError(body, err))
		return nil, false
	}
	if doc == nil {
		// A JSON null body counts as no body.
		v.fail([]any{"body"}, kindMissing, nil)
		return nil, false
	}
	return doc, true
}

// jsonDecodeError renders a syntax error as Python's json module reports it,
// at the character position where Python would stop.
func (v *validator) jsonDecodeError(body []byte, err error) validationError {
	msg, offset := "Expecting value", 0
	var se *json.SyntaxError
	if errors.As(err, &se) {
		offset = int(se.Offset) - 1
		text := se.Error()
		switch {
		case strings.HasPrefix(text, "unexpected end of JSON input"):
			offset = len(body)
			msg = "Expecting value"
		case strings.HasSuffix(text, "looking for beginning of object key string"):
			msg = "Expecting property name enclosed in double quotes"
		case strings.HasSuffix(text, "after object key"):
			msg = "Expecting ':' delimiter"
		case strings.HasSuffix(text, "after object key:value pair"), strings.HasSuffix(text, "after array element"):
			msg = "Expecting ',' delimiter"
		case strings.HasSuffix(text, "after top-level value"):
			msg = "Extra data"
		case strings.HasSuffix(text, "in string literal"):
			msg = "Invalid control character at"
		case strings.HasSuffix(text, "in string escape code"):
			msg = "Invalid \\escape"
			offset--
		}
	}
	offset = max(0, min(offset, len(body)))
	pos := utf8.RuneCount(body[:offset])
	doc := string(body)
	line := strings.Count(doc[:offset], "\n") + 1
	col := pos + 1
	if i := strings.LastIndexByte(doc[:offset], '\n'); i >= 0 {
		col = utf8.RuneCountInString(doc[i+1:offset]) + 1
	}
	if v.version == pydanticV2 {
		return validationError{
			Loc: []any{"body", pos}, Msg: "JSON decode error", Type: "json_invalid",
			Input: map[string]any{}, Ctx: map[string]any{"error": msg},
		}
	}
	return validationError{
		Loc:  []any{"body", pos},
		Msg:  fmt.Sprintf("%s: line %d column %d (char %d)", msg, line, col, pos),
		Type: "value_error.jsondecode",
		Ctx:  object{{"msg", msg}, {"doc", doc}, {"pos", pos}, {"lineno", line}, {"colno", col}},
	}
}

// decodeOrdered decodes JSON keeping object key order and number literals.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("extra data")
	}
	return v, nil
}

func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := &jsonObject{values: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				val, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := obj.values[key]; !dup {
					obj.keys = append(obj.keys, key)
				}
				obj.values[key] = val // the last duplicate wins, as in Python
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			list := []any{}
			for dec.More() {
				val, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, val)
			}
			_, err := dec.Token()
			return list, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		if f, ok := pythonConstant(t); ok {
			return f, nil
		}
		return t, nil
	default:
		return t, nil
	}
}

// pyFloat is a float that JSON cannot write but Python's json module reads:
// NaN, Infinity or -Infinity.
type pyFloat float64

// pythonConstants rewrites the constants Python's json module accepts
// outside strings (NaN, Infinity, -Infinity) as marked strings, so that
// encoding/json can decode the body as Python would.
func pythonConstants(data []byte) []byte {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data
	}
	var out bytes.Buffer
	inString, escaped := false, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			out.WriteByte(c)
			continue
		}
		replaced := false
		for _, name := range []string{"-Infinity", "Infinity", "NaN"} {
			if bytes.HasPrefix(data[i:], []byte(name)) {
				out.WriteString(`"\u0000py:` + name + `"`)
				i += len(name) - 1
				replaced = true
				break
			}
		}
		if !replaced {
			if c == '"' {
				inString = true
			}
			out.WriteByte(c)
		}
	}
	return out.Bytes()
}

// pythonConstant reads back a constant marked by pythonConstants.
func pythonConstant(s string) (pyFloat, bool) {
	switch s {
	case "\x00py:NaN":
		return pyFloat(math.NaN()), true
	case "\x00py:Infinity":
		return pyFloat(math.Inf(1)), true
	case "\x00py:-Infinity":
		return pyFloat(math.Inf(-1)), true
	}
	return 0, false
}

// plain turns a decoded value into ordinary Go values (map[string]any,
// []any, float64, string, bool, nil), as encoding/json produces them, but
// for an integer, which stays a json.Number: Python reads an integer
// exactly whatever its size (9007199254740993 included), and anything
// else as a float.
func plain(v any) any { return decoded(v, false) }

// echo renders a refused value as Pydantic echoes it in a 422 item's
// input: what Python's json module made of it, an object's keys in the
// order the client sent them (create_missing_rate_limit on the real
// server), an integer as written and a float as Python writes it.
func echo(v any) any { return decoded(v, true) }

// decoded is plain's value, or with echo echo's.
func decoded(v any, echo bool) any {
	switch t := v.(type) {
	case *jsonObject:
		if echo {
			o := make(object, 0, len(t.keys))
			for _, k := range t.keys {
				o = append(o, field{k, decoded(t.values[k], echo)})
			}
			return o
		}
		m := make(map[string]any, len(t.keys))
		for _, k := range t.keys {
			m[k] = decoded(t.values[k], echo)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			out[i] = decoded(item, echo)
		}
		return out
	case json.Number:
		if !strings.ContainsAny(string(t), ".eE") {
			if echo {
				return json.Number(pythonNumber(t))
			}
			return t
		}
		f, err := strconv.ParseFloat(string(t), 64)
		switch {
		case err == nil && echo:
			return pythonFloatValue(f)
		case err == nil || math.IsInf(f, 0):
			return f // 1e400 is Python's inf
		}
		return string(t)
	case pyFloat:
		return float64(t)
	}
	return v
}

// fieldKind is the Python type of a model field.
type fieldKind int

const (
	fieldString fieldKind = iota
	fieldInt
	fieldStringList
	fieldDict
	fieldProviderKeys
	fieldModel
)

// fieldSpec declares one field of a Pydantic model.
type fieldSpec struct {
	name     string
	kind     fieldKind
	optional bool
	fields   []fieldSpec // for fieldModel
}

// The request models, with their fields in declaration order.
var (
	rateLimitModel = []fieldSpec{
		{name: "batch_size", kind: fieldInt},
		{name: "max_retries", kind: fieldInt},
		{name: "retry_delay", kind: fieldInt},
		{name: "delay_between_batches", kind: fieldInt},
	}
	newEvaluationModel = []fieldSpec{
		{name: "app_id", kind: fieldString},
		{name: "variant_ids", kind: fieldStringList},
		{name: "evaluators_configs", kind: fieldStringList},
		{name: "testset_id", kind: fieldString},
		{name: "rate_limit", kind: fieldModel, fields: rateLimitModel},
		{name: "lm_providers_keys", kind: fieldProviderKeys, optional: true},
		{name: "correct_answer_column", kind: fieldString, optional: true},
	}
	addVariantFromBaseModel = []fieldSpec{
		{name: "base_id", kind: fieldString},
		{name: "new_variant_name", kind: fieldString},
		{name: "new_config_name", kind: fieldString},
		{name: "parameters", kind: fieldDict},
	}
)

// model validates v against fields and returns the coerced values by name:
// string, int64, []string, map[string]any, map[string]string or, for a
// nested model, map[string]any. An optional field sent as null is absent.
func (v *validator) model(loc []any, value any, fields []fieldSpec) (map[string]any, bool) {
	obj, ok := v.asObject(value)
	if !ok {
		if value == nil && v.version == pydanticV1 && len(loc) > 1 {
			v.fail(loc, kindNone, nil)
		} else {
			v.fail(loc, kindModel, value)
		}
		return nil, false
	}
	before := len(v.errs)
	out := map[string]any{}
	for _, f := range fields {
		floc := at(loc, f.name)
		raw, present := obj.get(f.name)
		if !present {
			if !f.optional {
				v.fail(floc, kindMissing, obj)
			}
			continue
		}
		if raw == nil && f.optional {
			continue
		}
		var val any
		var good bool
		switch f.kind {
		case fieldString:
			val, good = v.str(floc, raw)
		case fieldInt:
			val, good = v.integer(floc, raw)
		case fieldStringList:
			val, good = v.strList(floc, raw)
		case fieldDict:
			val, good = v.dict(floc, raw)
		case fieldProviderKeys:
			val, good = v.providerKeys(floc, raw)
		case fieldModel:
			val, good = v.model(floc, raw, f.fields)
		}
		if good {
			out[f.name] = val
		}
	}
	return out, len(v.errs) == before
}

// asObject accepts a JSON object and, under Pydantic v1, anything Python's
// dict() accepts: a list of two-item pairs.
func (v *validator) asObject(value any) (*jsonObject, bool) {
	switch t := value.(type) {
	case *jsonObject:
		return t, true
	case []any:
		if v.version == pydanticV2 {
			return nil, false
		}
		obj := &jsonObject{values: map[string]any{}}
		for _, item := range t {
			var k, val any
			switch p := item.(type) {
			case []any:
				if len(p) != 2 {
					return nil, false
				}
				k, val = p[0], p[1]
			case string:
				r := []rune(p)
				if len(r) != 2 {
					return nil, false
				}
				k, val = string(r[0]), string(r[1])
			default:
				return nil, false
			}
			key, ok := pythonKey(k)
			if !ok {
				return nil, false
			}
			if _, dup := obj.values[key]; !dup {
				obj.keys = append(obj.keys, key)
			}
			obj.values[key] = val
		}
		return obj, true
	}
	return nil, false
}

// pythonKey renders a hashable JSON value as the key json.dumps writes.
func pythonKey(k any) (string, bool) {
	switch t := k.(type) {
	case string:
		return t, true
	case json.Number:
		return pythonNumber(t), true
	case bool:
		if t {
			return "true", true
		}
		return "false", true
	case nil:
		return "null", true
	}
	return "", false
}

func (v *validator) str(loc []any, raw any) (string, bool) {
	switch t := raw.(type) {
	case string:
		return t, true
	case nil:
		v.fail(loc, kindNone, nil)
		return "", false
	case json.Number:
		if v.version == pydanticV1 {
			return pythonNumber(t), true
		}
	case pyFloat:
		if v.version == pydanticV1 {
			return pythonFloat(float64(t)), true
		}
	case bool:
		if v.version == pydanticV1 {
			if t {
				return "True", true
			}
			return "False", true
		}
	}
	v.fail(loc, kindString, raw)
	return "", false
}

func (v *validator) integer(loc []any, raw any) (int64, bool) {
	switch t := raw.(type) {
	case nil:
		if v.version == pydanticV1 {
			v.fail(loc, kindNone, nil)
		} else {
			v.fail(loc, kindIntType, nil)
		}
		return 0, false
	case bool:
		if t {
			return 1, true
		}
		return 0, true
	case json.Number:
		s := string(t)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, true
			}
			v.fail(loc, kindIntParsing, raw)
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		if math.IsInf(f, 0) && v.version == pydanticV2 {
			v.fail(loc, kindFiniteNumber, raw) // 1e400 is Python's inf
			return 0, false
		}
		if err != nil || math.Abs(f) >= 1<<63 {
			v.fail(loc, kindIntParsing, raw)
			return 0, false
		}
		if f != math.Trunc(f) && v.version == pydanticV2 {
			v.fail(loc, kindIntFromFloat, raw)
			return 0, false
		}
		return int64(f), true // Python's int() truncates
	case pyFloat:
		if v.version == pydanticV2 {
			v.fail(loc, kindFiniteNumber, raw)
		} else {
			v.fail(loc, kindIntParsing, raw)
		}
		return 0, false
	case string:
		s := strings.TrimSpace(t)
		if v.version == pydanticV1 {
			// Python's int() also accepts underscores between digits.
			if !strings.HasPrefix(s, "_") && !strings.HasSuffix(s, "_") && !strings.Contains(s, "__") {
				s = strings.ReplaceAll(s, "_", "")
			}
		}
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
		v.fail(loc, kindIntParsing, raw)
		return 0, false
	}
	v.fail(loc, kindIntType, raw)
	return 0, false
}

func (v *validator) strList(loc []any, raw any) ([]string, bool) {
	list, ok := raw.([]any)
	if !ok {
		if raw == nil && v.version == pydanticV1 {
			v.fail(loc, kindNone, nil)
		} else {
			v.fail(loc, kindList, raw)
		}
		return nil, false
	}
	out := make([]string, 0, len(list))
	good := true
	for i, item := range list {
		s, ok := v.str(at(loc, i), item)
		good = good && ok
		out = append(out, s)
	}
	return out, good
}

func (v *validator) dict(loc []any, raw any) (map[string]any, bool) {
	obj, ok := v.asObject(raw)
	if !ok {
		if raw == nil && v.version == pydanticV1 {
			v.fail(loc, kindNone, nil)
		} else {
			v.fail(loc, kindDict, raw)
		}
		return nil, false
	}
	return plain(obj).(map[string]any), true
}

func (v *validator) providerKeys(loc []any, raw any) (map[string]string, bool) {
	obj, ok := v.asObject(raw)
	if !ok {
		v.fail(loc, kindDict, raw)
		return nil, false
	}
	out := map[string]string{}
	good := true
	for _, key := range obj.keys {
		if !slices.Contains(providerKeyNames, key) {
			good = false
			v.errs = append(v.errs, v.enumError(loc, key))
		}
		s, ok := v.str(at(loc, key), obj.values[key])
		good = good && ok
		out[key] = s
	}
	return out, good
}

func (v *validator) enumError(loc []any, key string) validationError {
	quoted := make([]string, len(providerKeyNames))
	for i, name := range providerKeyNames {
		quoted[i] = "'" + name + "'"
	}
	if v.version == pydanticV1 {
		return validationError{
			Loc:  at(loc, "__key__"),
			Msg:  "value is not a valid enumeration member; permitted: " + strings.Join(quoted, ", "),
			Type: "type_error.enum",
			Ctx:  map[string]any{"enum_values": providerKeyNames},
		}
	}
	expected := strings.Join(quoted[:len(quoted)-1], ", ") + " or " + quoted[len(quoted)-1]
	return validationError{
		Loc: at(loc, key, "[key]"), Msg: "Input should be " + expected, Type: "enum",
		Input: key, Ctx: map[string]any{"expected": expected},
	}
}

// pythonNumber renders a JSON number as Python's str() renders the int or
// float json.loads makes of it.
func pythonNumber(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if strings.TrimLeft(s, "-0") == "" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if math.IsInf(f, -1) {
			return "-inf"
		}
		return "inf"
	}
	return pythonFloat(f)
}

// pythonFloat is Python's repr of a float: the shortest digits that round
// trip, in fixed notation from 1e-4 up to 1e16 and scientific outside.
func pythonFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(sci, "e")
	exp, _ := strconv.Atoi(expText)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, exp)
}
