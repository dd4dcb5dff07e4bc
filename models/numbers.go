package models

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values the SDK does not model (a variant's parameters, an evaluator
// config's settings, a span's metadata, content and config) keep their
// numbers exactly as the server wrote them: decoded, each number is a
// json.Number, whose text is the server's, rather than a float64, which
// changes an integer past 2^53 (a seed such as 9007199254740993) and cuts
// a long decimal. Encoded again, a json.Number writes that same text, so
// a value read and sent back (agenta variant fork --from) is unchanged.
// Number reads such a value as a float64.

// decodeMap decodes the JSON object raw, or null or nothing, numbers as
// json.Number. model and field name the value in a type error. raw is
// valid JSON, as encoding/json has checked it.
func decodeMap(raw json.RawMessage, model, field string) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] != '{' {
		kind := map[byte]string{'[': "array", '"': "string", 't': "bool", 'f': "bool"}[raw[0]]
		if kind == "" {
			kind = "number"
		}
		return nil, &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[map[string]any](), Struct: model, Field: field}
	}
	p := valueParser{data: raw}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

// valueParser decodes valid JSON into the values encoding/json gives an
// any, numbers as json.Number, as a Decoder with UseNumber does, without a
// Decoder's copy of the input.
type valueParser struct {
	data []byte
	i    int
}

func (p *valueParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *valueParser) value() (any, error) {
	p.space()
	if p.i >= len(p.data) {
		return nil, errors.New("models: unexpected end of JSON")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		p.i++
		m := map[string]any{}
		for {
			p.space()
			if p.data[p.i] == '}' {
				p.i++
				return m, nil
			}
			if p.data[p.i] == ',' {
				p.i++
				p.space()
			}
			key, err := p.text()
			if err != nil {
				return nil, err
			}
			p.space()
			p.i++ // ':'
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
	case c == '[':
		p.i++
		list := []any{}
		for {
			p.space()
			if p.data[p.i] == ']' {
				p.i++
				return list, nil
			}
			if p.data[p.i] == ',' {
				p.i++
			}
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
	case c == '"':
		return p.text()
	case c == 't':
		p.i += 4
		return true, nil
	case c == 'f':
		p.i += 5
		return false, nil
	case c == 'n':
		p.i += 4
		return nil, nil
	}
	start := p.i
	for p.i < len(p.data) && strings.IndexByte("+-.0123456789eE", p.data[p.i]) >= 0 {
		p.i++
	}
	return json.Number(p.data[start:p.i]), nil
}

// text decodes the string at i: a plain one directly, one with escapes or
// invalid UTF-8 by encoding/json, so that it reads exactly as there.
func (p *valueParser) text() (string, error) {
	start := p.i
	plain := true
	for p.i++; p.i < len(p.data); p.i++ {
		switch c := p.data[p.i]; {
		case c == '\\':
			plain = false
			p.i++
		case c == '"':
			p.i++
			raw := p.data[start:p.i]
			if plain && utf8.Valid(raw) {
				return string(raw[1 : len(raw)-1]), nil
			}
			var s string
			err := json.Unmarshal(raw, &s)
			return s, err
		}
	}
	return "", errors.New("models: unexpected end of JSON string")
}

// typeErrorIn makes a type error from decoding a wire struct read as one
// from decoding model: encoding/json names the embedded struct of the
// model's fields (fields, spanFields) in the field's path.
func typeErrorIn(err error, model string) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		typeErr.Field = strings.ReplaceAll(strings.TrimPrefix(typeErr.Field, "fields."), "spanFields.", "")
		if typeErr.Struct == "" || typeErr.Struct == "spanWire" {
			typeErr.Struct = model
		}
	}
	return err
}

// Number returns v as a float64 when it is a number: a json.Number, as
// the models decode numbers they do not model, or any Go number type, as
// a map built in Go holds. It reports false for anything else.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	}
	return 0, false
}

// UnmarshalJSON decodes a variant, its parameters' numbers as json.Number.
func (v *AppVariantResponse) UnmarshalJSON(data []byte) error {
	type fields AppVariantResponse
	var w struct {
		fields
		Parameters json.RawMessage `json:"parameters,omitempty"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return typeErrorIn(err, "AppVariantResponse")
	}
	params, err := decodeMap(w.Parameters, "AppVariantResponse", "parameters")
	if err != nil {
		return err
	}
	*v = AppVariantResponse(w.fields)
	v.Parameters = params
	return nil
}

// UnmarshalJSON decodes the request, its parameters' numbers as
// json.Number.
func (a *AddVariantFromBase) UnmarshalJSON(data []byte) error {
	type fields AddVariantFromBase
	var w struct {
		fields
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return typeErrorIn(err, "AddVariantFromBase")
	}
	params, err := decodeMap(w.Parameters, "AddVariantFromBase", "parameters")
	if err != nil {
		return err
	}
	*a = AddVariantFromBase(w.fields)
	a.Parameters = params
	return nil
}

// UnmarshalJSON decodes an evaluator config, its settings' numbers as
// json.Number.
func (c *EvaluatorConfig) UnmarshalJSON(data []byte) error {
	type fields EvaluatorConfig
	var w struct {
		fields
		SettingsValues json.RawMessage `json:"settings_values,omitempty"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return typeErrorIn(err, "EvaluatorConfig")
	}
	settings, err := decodeMap(w.SettingsValues, "EvaluatorConfig", "settings_values")
	if err != nil {
		return err
	}
	*c = EvaluatorConfig(w.fields)
	c.SettingsValues = settings
	return nil
}

// spanWire is a span as it is decoded: its maps raw, and its children
// spanWire too, so that a tree is decoded in one pass, not once per level.
type spanWire struct {
	spanFields
	Metadata json.RawMessage `json:"metadata"`
	Content  json.RawMessage `json:"content"`
	Config   json.RawMessage `json:"config,omitempty"`
	Children []spanWire      `json:"children"`
}

// spanFields has Span's fields and none of its methods.
type spanFields Span

// UnmarshalJSON decodes a span tree, the numbers of metadata, content and
// config as json.Number.
func (s *Span) UnmarshalJSON(data []byte) error {
	var w spanWire
	if err := json.Unmarshal(data, &w); err != nil {
		return typeErrorIn(err, "Span")
	}
	return w.span(s)
}

func (w *spanWire) span(s *Span) error {
	*s = Span(w.spanFields)
	var err error
	if s.Metadata, err = decodeMap(w.Metadata, "Span", "metadata"); err != nil {
		return err
	}
	if s.Content, err = decodeMap(w.Content, "Span", "content"); err != nil {
		return err
	}
	if s.Config, err = decodeMap(w.Config, "Span", "config"); err != nil {
		return err
	}
	if w.Children != nil {
		s.Children = make([]Span, len(w.Children))
		for i := range w.Children {
			if err := w.Children[i].span(&s.Children[i]); err != nil {
				return err
			}
		}
	}
	return nil
}
