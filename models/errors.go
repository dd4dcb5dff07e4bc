package models

import (
	"strconv"

	"github.com/agenta-go/agenta/internal/text"
)

// The package's one error type. RunError and Error are shapes the service
// sends (a failed cell's status object, a result's failure), not Go errors.

// TimestampError reports a string that is not a timestamp ParseTimestamp accepts.
type TimestampError struct {
	Value string
}

// Error says which value could not be read as a timestamp, bounded.
func (e *TimestampError) Error() string {
	return "models: invalid timestamp " + strconv.Quote(text.Clip(e.Value, 65))
}
