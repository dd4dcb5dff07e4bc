package models

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTimestampAccepts(t *testing.T) {
	utc := func(ns int) time.Time { return time.Date(2024, 6, 26, 12, 22, 31, ns, time.UTC) }
	for _, tc := range []struct {
		in     string
		want   time.Time
		offset int // seconds east of UTC
	}{
		// Naive: stored objects, meaning UTC, with 0 to 9 fractional digits.
		{"2024-06-26T12:22:31", utc(0), 0},
		{"2024-06-26T12:22:31.7", utc(700000000), 0},
		{"2024-06-26T12:22:31.77", utc(770000000), 0},
		{"2024-06-26T12:22:31.775", utc(775000000), 0},
		{"2024-06-26T12:22:31.7750", utc(775000000), 0},
		{"2024-06-26T12:22:31.77500", utc(775000000), 0},
		{"2024-06-26T12:22:31.775000", utc(775000000), 0},
		{"2024-06-26T12:22:31.7750001", utc(775000100), 0},
		{"2024-06-26T12:22:31.77500012", utc(775000120), 0},
		{"2024-06-26T12:22:31.123456789", utc(123456789), 0},
		{"2024-06-26T12:22:31.000000000", utc(0), 0},
		{"2024-06-26 12:22:31.775000", utc(775000000), 0},
		// Zoned: fresh objects.
		{"2024-06-26T12:22:31.775+00:00", utc(775000000), 0},
		{"2024-06-26T12:22:31.775000-00:00", utc(775000000), 0},
		{"2024-06-26T12:22:31Z", utc(0), 0},
		{"2024-06-26t12:22:31.5z", utc(500000000), 0},
		{"2024-06-26T14:22:31.775+02:00", utc(775000000), 7200},
		{"2024-06-26T06:52:31-05:30", utc(0), -19800},
		// Calendar edges.
		{"2024-02-29T00:00:00", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), 0},
		{"2000-02-29T23:59:59.999999999", time.Date(2000, 2, 29, 23, 59, 59, 999999999, time.UTC), 0},
		{"0001-01-01T00:00:00", time.Time{}, 0},
	} {
		got, err := ParseTimestamp(tc.in)
		if !assert.NoError(t, err, tc.in) {
			continue
		}
		assert.True(t, got.Equal(tc.want), "%s: expected %s, got %s", tc.in, tc.want, got)
		_, offset := got.Zone()
		assert.Equal(t, tc.offset, offset, "%s: offset", tc.in)
		if tc.offset == 0 {
			assert.Equal(t, time.UTC, got.Location(), "%s: naive and zero-offset times are UTC", tc.in)
		}
	}
}

func TestParseTimestampRefuses(t *testing.T) {
	for _, in := range []string{
		"2024-06-26T12:22:31.1234567891",  // 10 fractional digits
		"2024-06-26T12:22:31.12345678912", // 11
		"2016-12-31T23:59:60",             // leap second
		"2016-12-31T23:59:60Z",
		"2024-02-30T00:00:00", // February 30
		"2023-02-29T00:00:00", // not a leap year
		"2100-02-29T00:00:00",
		"2024-06-31T00:00:00",
		"2024-00-10T00:00:00",
		"2024-06-26T25:00:00",
		"2024-06-26T12:22",
		"2024-06-26",
		"2024-06-26T12:22:31.",
		"2024-06-26T12:22:31+02",
		"2024-06-26T12:22:31+0200",
		"2024-06-26T12:22:31+02:00:00",
		"2024-06-26T12:22:31 UTC",
		"2024-06-26T12:22:31ZZ",
		"2024/06/26T12:22:31",
		"2024-06-26X12:22:31",
		"24-06-26T12:22:31",
		"２０２４-06-26T12:22:31",
		"yesterday",
		"",
		"1719404551",
	} {
		got, err := ParseTimestamp(in)
		assert.Error(t, err, "expected %q to be refused, got %s", in, got)
		var terr *TimestampError
		if assert.True(t, errors.As(err, &terr), "%q: expected *TimestampError, got %T", in, err) {
			assert.Equal(t, in, terr.Value)
		}
		assert.True(t, got.IsZero(), "%q: a refused value yields the zero time", in)
	}
}

func TestTimestampErrorMessage(t *testing.T) {
	err := &TimestampError{Value: "2016-12-31T23:59:60"}
	assert.Equal(t, `models: invalid timestamp "2016-12-31T23:59:60"`, err.Error())
	long := &TimestampError{Value: strings.Repeat("9", 500)}
	assert.Less(t, len(long.Error()), 100, "a long value is cut: %s", long.Error())
}

func TestTimestampJSON(t *testing.T) {
	type doc struct {
		At Timestamp `json:"at"`
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{`{"at":"2024-06-26T12:22:31.775000"}`, time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC)},
		{`{"at":"2024-06-26T12:22:31.775+00:00"}`, time.Date(2024, 6, 26, 12, 22, 31, 775000000, time.UTC)},
		{`{"at":"2024-06-26T12:22:31\u002e5"}`, time.Date(2024, 6, 26, 12, 22, 31, 500000000, time.UTC)},
		{`{"at":null}`, time.Time{}},
		{`{}`, time.Time{}},
	} {
		var d doc
		require.NoError(t, json.Unmarshal([]byte(tc.in), &d), tc.in)
		assert.True(t, d.At.Equal(tc.want), "%s: expected %s, got %s", tc.in, tc.want, d.At)
	}
	for _, in := range []string{`{"at":1719404551}`, `{"at":true}`, `{"at":"2024-02-30T00:00:00"}`, `{"at":{}}`, `{"at":"2024-06-26T12:22:31\u0000"}`} {
		var d doc
		assert.Error(t, json.Unmarshal([]byte(in), &d), "expected %s to be refused", in)
	}

	// A null resets a previously set value.
	d := doc{At: Timestamp{time.Now()}}
	require.NoError(t, json.Unmarshal([]byte(`{"at":null}`), &d))
	assert.True(t, d.At.IsZero())

	// Marshalling writes RFC 3339 with nanoseconds and keeps the offset.
	for _, tc := range []struct{ in, out string }{
		{"2024-06-26T12:22:31.775000", `"2024-06-26T12:22:31.775Z"`},
		{"2024-06-26T14:22:31.775+02:00", `"2024-06-26T14:22:31.775+02:00"`},
		{"2024-06-26T12:22:31.123456789", `"2024-06-26T12:22:31.123456789Z"`},
		{"2024-06-26T12:22:31", `"2024-06-26T12:22:31Z"`},
	} {
		parsed, err := ParseTimestamp(tc.in)
		require.NoError(t, err)
		out, err := json.Marshal(Timestamp{parsed})
		require.NoError(t, err)
		assert.Equal(t, tc.out, string(out), tc.in)
		var back Timestamp
		require.NoError(t, json.Unmarshal(out, &back))
		assert.True(t, back.Equal(parsed), "%s: round trip gave %s", tc.in, back)
	}
}
