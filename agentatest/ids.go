package agentatest

import (
	"fmt"
	"strings"
)

// badlyFormedUUID is Python's uuid.UUID error for an id it cannot parse,
// which the service answers with a 500.
const badlyFormedUUID = "badly formed hexadecimal UUID string"

// wellFormedUUID reports whether Python's uuid.UUID would parse id: 32 hex
// digits once braces, a "urn:uuid:" prefix and hyphens are removed.
func wellFormedUUID(id string) bool {
	id = strings.ReplaceAll(id, "urn:", "")
	id = strings.ReplaceAll(id, "uuid:", "")
	id = strings.Trim(id, "{}")
	id = strings.ReplaceAll(id, "-", "")
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// newID returns a fresh identifier shaped like the service's MongoDB
// ObjectIds. Identifiers are sequential, so a test's output is stable.
// Callers hold s.mu.
func (s *Server) newID() string {
	s.nextID++
	return fmt.Sprintf("66a0c0de%016x", s.nextID)
}
