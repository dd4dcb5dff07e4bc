package agenta

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// unencodableError explains why body, a request body, cannot be marshalled
// (marshalErr): it walks the value for the first part JSON cannot carry and
// names it by its Go path, such as
// AddVariantFromBase.Parameters["temperature"]: NaN cannot be sent as JSON.
// The reason never quotes a value, which may be a credential.
func unencodableError(body any, marshalErr error) error {
	v := reflect.ValueOf(body)
	root := "body"
	if t := reflect.TypeOf(body); t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Name() != "" {
			root = t.Name()
		}
	}
	w := walker{seen: map[uintptr]bool{}}
	if path, reason, ok := w.find(v, root, 0); ok {
		return invalid(path, "%s cannot be sent as JSON", reason)
	}
	return invalid(root, "cannot be sent as JSON: %s", jsonReason(marshalErr))
}

// maxWalkDepth bounds the walk, as encoding/json bounds its own recursion.
const maxWalkDepth = 1000

// walker looks for the part of a value that encoding/json refuses.
type walker struct {
	seen map[uintptr]bool // maps, slices and pointers on the current path
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// find returns the path of the first unencodable part of v and what it is.
func (w *walker) find(v reflect.Value, path string, depth int) (string, string, bool) {
	if !v.IsValid() {
		return "", "", false
	}
	if depth > maxWalkDepth {
		return path, "a value nested this deep", true
	}
	if v.CanInterface() && implementsMarshaler(v) {
		// A custom encoding decides for itself: look inside only when it
		// fails, and blame the value itself when nothing inside explains it.
		if _, err := json.Marshal(v.Interface()); err == nil {
			return "", "", false
		} else if p, r, ok := w.inside(v, path, depth); ok {
			return p, r, true
		} else {
			return path, "its value (" + jsonReason(err) + ")", true
		}
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		switch f := v.Float(); {
		case math.IsNaN(f):
			return path, "NaN", true
		case math.IsInf(f, 1):
			return path, "+Inf", true
		case math.IsInf(f, -1):
			return path, "-Inf", true
		}
	case reflect.Complex64, reflect.Complex128, reflect.Chan, reflect.Func, reflect.UnsafePointer:
		return path, "a " + v.Kind().String(), true
	}
	return w.inside(v, path, depth)
}

// inside walks the parts of a composite value.
func (w *walker) inside(v reflect.Value, path string, depth int) (string, string, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice:
		if v.IsNil() {
			return "", "", false
		}
		if v.Kind() != reflect.Slice || v.Len() > 0 {
			ptr := v.Pointer()
			if w.seen[ptr] {
				return path, "a value that contains itself", true
			}
			w.seen[ptr] = true
			defer delete(w.seen, ptr)
		}
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return w.find(v.Elem(), path, depth+1)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous || f.Tag.Get("json") == "-" {
				continue
			}
			fieldPath := path + "." + f.Name
			if f.Anonymous {
				fieldPath = path // promoted fields are named as the caller writes them
			}
			if p, r, ok := w.find(v.Field(i), fieldPath, depth+1); ok {
				return p, r, true
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if p, r, ok := w.find(v.MapIndex(k), path+"["+mapKey(k)+"]", depth+1); ok {
				return p, r, true
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if p, r, ok := w.find(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1); ok {
				return p, r, true
			}
		}
	}
	return "", "", false
}

// implementsMarshaler reports a value with its own JSON or text encoding.
func implementsMarshaler(v reflect.Value) bool {
	t := v.Type()
	if t.Kind() == reflect.Interface {
		return false
	}
	if t.Implements(marshalerType) || t.Implements(textMarshalerType) {
		return true
	}
	return v.CanAddr() && (reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshalerType))
}

// mapKey writes a map key as Go source would: quoted when it is a string.
func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return strconv.Quote(k.String())
	}
	return fmt.Sprint(k)
}

// jsonReason is encoding/json's innermost complaint without its "json: "
// prefixes, for an error the walk could not place or a failing MarshalJSON.
func jsonReason(err error) string {
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		return "unsupported value " + unsupported.Str
	}
	var unsupportedType *json.UnsupportedTypeError
	if errors.As(err, &unsupportedType) {
		return "unsupported type " + unsupportedType.Type.String()
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	return strings.ReplaceAll(err.Error(), "json: ", "")
}
