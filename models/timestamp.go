package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// Timestamp is a point in time as the service writes it.
//
// The service sends two forms: freshly created objects carry a zone
// ("2024-06-26T12:22:31.775+00:00"), while objects read back from storage
// carry none ("2024-06-26T12:22:31.775000"), which means UTC. Timestamp
// accepts both, and JSON null as the zero value. It marshals as RFC 3339 with
// nanosecond precision.
type Timestamp struct {
	time.Time
}

// ParseTimestamp parses an ISO 8601 timestamp as the service writes it: a
// date, "T" (or a space), a time with 0 to 9 fractional digits, and an
// optional zone "Z" or ±hh:mm. Without a zone the time is UTC.
//
// It is strict: it refuses anything a time.Time cannot hold exactly, such as
// more than nine fractional digits, a leap second, or February 30, rather
// than silently rounding it.
func ParseTimestamp(s string) (time.Time, error) {
	t, ok := parseTimestamp(s)
	if !ok {
		return time.Time{}, &TimestampError{Value: s}
	}
	return t, nil
}

// UnmarshalJSON accepts a timestamp string, with or without a zone, or null.
func (t *Timestamp) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		t.Time = time.Time{}
		return nil
	}
	if len(data) < 2 || data[0] != '"' || data[len(data)-1] != '"' {
		return errors.New("models: timestamp must be a JSON string")
	}
	s := data[1 : len(data)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		// Escapes are legal JSON but never used by the service; take the slow path.
		var str string
		if err := json.Unmarshal(data, &str); err != nil {
			return err
		}
		s = []byte(str)
	}
	parsed, ok := parseTimestamp(string(s))
	if !ok {
		return &TimestampError{Value: string(s)}
	}
	t.Time = parsed
	return nil
}

// MarshalJSON writes the time in RFC 3339 with nanoseconds, keeping its offset.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return t.Time.MarshalJSON()
}

// parseTimestamp is the strict parser behind Timestamp. It returns UTC for
// naive times and for a zero offset, and a fixed zone otherwise.
func parseTimestamp(s string) (time.Time, bool) {
	// YYYY-MM-DDTHH:MM:SS is 19 bytes.
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	switch s[10] {
	case 'T', 't', ' ':
	default:
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, false
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	rest := s[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		frac := rest[1:n]
		if len(frac) == 0 || len(frac) > 9 {
			return time.Time{}, false
		}
		v, _ := digits(frac)
		for i := len(frac); i < 9; i++ {
			v *= 10
		}
		nsec = v
		rest = rest[n:]
	}
	loc := time.UTC
	switch {
	case rest == "" || rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := digits(rest[1:3])
		om, okm := digits(rest[4:6])
		if !okh || !okm || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset := (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
		if offset != 0 {
			loc = time.FixedZone("", offset)
		}
	default:
		return time.Time{}, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc), true
}

// digits parses a run of ASCII digits; it reports false on anything else.
func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
