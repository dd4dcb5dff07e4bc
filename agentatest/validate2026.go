package agentatest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// How v0.113 (FastAPI 0.139, Pydantic 2.13) refuses a 2026 request: a 422
// whose detail items carry type, loc, msg, input and, for some types, ctx.
// The fake checks what its handlers read: the body's shape, ids that must
// be UUIDs, windowing, and the step maps of a create.

// fail26 is one item of a 2026 422 answer.
type fail26 struct {
	typ, msg string
	loc      []any
	input    any
	ctx      object
}

func (f fail26) wire() object {
	o := object{{"type", f.typ}, {"loc", f.loc}, {"msg", f.msg}, {"input", f.input}}
	if f.ctx != nil {
		o = append(o, field{"ctx", f.ctx})
	}
	return o
}

// refusal26 is the 422 answer listing fails.
func refusal26(fails []fail26) answer {
	items := make([]any, len(fails))
	for i, f := range fails {
		items[i] = f.wire()
	}
	return jsonAnswer(http.StatusUnprocessableEntity, object{{"detail", items}})
}

func missing26(loc ...any) fail26 {
	return fail26{typ: "missing", msg: "Field required", loc: loc}
}

// body26 is a parsed request body: a JSON object with numbers kept as
// they came, or nil for no body.
type body26 map[string]any

// readBody26 parses a 2026 request body. An empty body is nil, or with
// required a 422 missing; malformed JSON is FastAPI's json_invalid; a body
// that is not an object is model_attributes_type.
func readBody26(c *call, required bool) (body26, answer, bool) {
	raw := bytes.TrimSpace(c.body)
	if len(raw) == 0 {
		if required {
			return nil, refusal26([]fail26{missing26("body")}), false
		}
		return nil, answer{}, true
	}
	var v any
	if err := decodeNumbers(raw, &v); err != nil {
		pos, why := int64(0), "Expecting value"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = se.Offset - 1
			if raw[0] == '{' && pos >= 1 && raw[pos] != '"' && raw[pos] != '}' {
				why = "Expecting property name enclosed in double quotes"
			}
		}
		return nil, refusal26([]fail26{{typ: "json_invalid", msg: "JSON decode error", loc: []any{"body", pos},
			input: object{}, ctx: object{{"error", why}}}}), false
	}
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil && !required {
			return nil, answer{}, true
		}
		return nil, refusal26([]fail26{{typ: "model_attributes_type",
			msg: "Input should be a valid dictionary or object to extract fields from", loc: []any{"body"}, input: v}}), false
	}
	return body26(m), answer{}, true
}

// uuid26 reads a UUID as Pydantic does: a string of 32 hex digits, dashed
// or not (braces and "urn:uuid:" allowed), returned in its canonical form.
func uuid26(v any, loc []any) (string, *fail26) {
	s, ok := v.(string)
	if !ok {
		return "", &fail26{typ: "uuid_type", msg: "UUID input should be a string, bytes or UUID object", loc: loc, input: v}
	}
	why := ""
	for i, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF-", c) {
			why = fmt.Sprintf("invalid character: found `%c` at %d", c, i+1)
			break
		}
	}
	if why == "" && !wellFormedUUID(s) {
		if strings.Contains(s, "-") {
			why = fmt.Sprintf("invalid group count: expected 5, found %d", strings.Count(s, "-")+1)
		} else {
			why = fmt.Sprintf("invalid length: expected length 32 for simple format, found %d", len(s))
		}
	}
	if why != "" {
		return "", &fail26{typ: "uuid_parsing", msg: "Input should be a valid UUID, " + why, loc: loc, input: s, ctx: object{{"error", why}}}
	}
	hex := strings.ToLower(uuidDigits(s))
	return dashed(hex), nil
}

// pathUUID26 reads a path id, answering the 422 v0.113 gives for a
// malformed one.
func pathUUID26(id, name string) (string, answer, bool) {
	canonical, f := uuid26(id, []any{"path", name})
	if f != nil {
		return "", refusal26([]fail26{*f}), false
	}
	return canonical, answer{}, true
}

// refIn is a Reference as a request names it.
type refIn struct {
	id, slug, version string
}

// empty reports a reference that names nothing.
func (r *refIn) empty() bool { return r == nil || r.id == "" && r.slug == "" && r.version == "" }

// decode26 reads a 2026 request body into *into, checking each member its
// fields name as v0.113's Pydantic models do, in field order, and answers
// the 422 listing every fail. A field's body tag names its member, as a
// json tag would (body, not json, since its options are not
// encoding/json's): "required" (absent is a missing fail), "uuid" (a
// string or list of strings that must be UUIDs, kept canonical). Fields
// preset by the caller are defaults: a bool keeps its value unless the
// member is a bool. The types a field may have are those of fill26.
func decode26[T any](c *call, required bool, into *T) (answer, bool) {
	b, refused, ok := readBody26(c, required)
	if !ok {
		return refused, false
	}
	var fails []fail26
	b.decode(into, []any{"body"}, &fails)
	if len(fails) > 0 {
		return refusal26(fails), false
	}
	return answer{}, true
}

// decode fills the struct into points to from b as decode26 does, for a
// part of a body whose member is named at run time.
func (b body26) decode(into any, loc []any, fails *[]fail26) {
	b.fill26(reflect.ValueOf(into).Elem(), loc, fails)
}

// reader26 is a field type that reads its member itself: v is the
// member's value, nil when absent.
type reader26 interface {
	read26(v any, loc []any, fails *[]fail26)
}

// fill26 sets the exported fields of the struct v from b's members, each
// left as it is when its member is absent or null: bool, string, []string
// (a list of UUIDs), *int, *refIn, body26 (any object), a reader26, a
// struct or a pointer to one (an object). Other types are a mistake of the
// fake's and panic.
func (b body26) fill26(v reflect.Value, loc []any, fails *[]fail26) {
	t := v.Type()
	for i := range t.NumField() {
		name, opts, _ := strings.Cut(t.Field(i).Tag.Get("body"), ",")
		raw, present := b[name]
		l, f := at(loc, name), v.Field(i)
		if !present && strings.Contains(opts, "required") {
			// v0.113 shows the object that lacks the member as its input.
			fail := missing26(l...)
			if b != nil {
				fail.input = map[string]any(b)
			}
			*fails = append(*fails, fail)
			continue
		}
		if r, ok := f.Addr().Interface().(reader26); ok {
			r.read26(raw, l, fails)
			continue
		}
		if raw == nil {
			continue
		}
		var bad *fail26
		switch p := f.Addr().Interface().(type) {
		case *bool:
			if x, ok := raw.(bool); ok {
				*p = x
			}
		case *string:
			var ok bool
			if strings.Contains(opts, "uuid") {
				*p, bad = uuid26(raw, l)
			} else if *p, ok = raw.(string); !ok {
				bad = &fail26{typ: "string_type", msg: "Input should be a valid string", loc: l, input: raw}
			}
		case *[]string:
			items, isList := raw.([]any)
			if !isList {
				bad = &fail26{typ: "list_type", msg: "Input should be a valid list", loc: l, input: raw}
				break
			}
			*p = uuidItems26(items, l, fails)
		case **int:
			*p, bad = integer26(raw, l)
		default:
			o := b.object(name, loc, fails)
			switch {
			case o == nil:
			case f.Type() == reflect.TypeFor[body26]():
				f.Set(reflect.ValueOf(o))
			case f.Type() == reflect.TypeFor[*refIn]():
				var r struct {
					ID      string `body:"id,uuid"`
					Slug    string `body:"slug"`
					Version string `body:"version"`
				}
				o.fill26(reflect.ValueOf(&r).Elem(), l, fails)
				f.Set(reflect.ValueOf(&refIn{r.ID, r.Slug, r.Version}))
			case f.Kind() == reflect.Struct:
				o.fill26(f, l, fails)
			case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
				f.Set(reflect.New(f.Type().Elem()))
				o.fill26(f.Elem(), l, fails)
			default:
				panic("agentatest: decode26 cannot read a " + f.Type().String())
			}
		}
		if bad != nil {
			*fails = append(*fails, *bad)
		}
	}
}

// object returns the member named key as an object, nil when absent or
// null; a member of another type is a fail.
func (b body26) object(key string, loc []any, fails *[]fail26) body26 {
	v := b[key]
	m, isMap := v.(map[string]any)
	if v != nil && !isMap {
		*fails = append(*fails, fail26{typ: "model_attributes_type",
			msg: "Input should be a valid dictionary or object to extract fields from", loc: at(loc, key), input: v})
	}
	return body26(m)
}

// integer26 reads an integer as Pydantic does from JSON.
func integer26(v any, loc []any) (*int, *fail26) {
	n, isNumber := v.(json.Number)
	if !isNumber {
		return nil, &fail26{typ: "int_type", msg: "Input should be a valid integer", loc: loc, input: v}
	}
	i, err := n.Int64()
	if err != nil {
		return nil, &fail26{typ: "int_from_float", msg: "Input should be a valid integer, got a number with a fractional part", loc: loc, input: v}
	}
	return &[]int{int(i)}[0], nil
}

// uuidItems26 reads a list's items as UUIDs.
func uuidItems26(items []any, loc []any, fails *[]fail26) []string {
	out := make([]string, 0, len(items))
	for i, item := range items {
		id, f := uuid26(item, at(loc, i))
		if f != nil {
			*fails = append(*fails, *f)
			continue
		}
		out = append(out, id)
	}
	return out
}
