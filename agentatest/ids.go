package agentatest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Ids are UUIDv7 strings, as the service's since July 2024, or under
// WithOlderServer 24-hex MongoDB ObjectIds, as the servers before it used.
// A generated id holds a sequence number in its random bits and, in its
// time bits, the clock given WithClock or else the fixed idEpoch, so that a
// test's ids are the same on every run and still sort in the order they
// were made. Their mark bits are always generatedMark and the demo's never
// are, so a generated id can never take a demo id.

// idEpoch is the time in generated ids without WithClock.
var idEpoch = time.Date(2024, 7, 15, 10, 52, 51, 0, time.UTC)

const (
	generatedMark  = 0x000
	demoMark       = 0xde0
	demoObjectMark = 0xde
)

// uuid7 lays out a UUIDv7: 48 bits of Unix milliseconds, the version, 12
// bits of rand_a, the variant, and 62 bits of rand_b.
func uuid7(t time.Time, randA uint16, randB uint64) string {
	ms := uint64(t.UnixMilli()) & (1<<48 - 1)
	return fmt.Sprintf("%08x-%04x-7%03x-%04x-%012x",
		ms>>16, ms&0xffff, randA&0xfff, 0x8000|(randB>>48)&0x3fff, randB&(1<<48-1))
}

// objectID lays out a MongoDB ObjectId: 4 bytes of Unix seconds, then 8
// bits of mark and 56 bits of sequence in place of the random and counter
// bytes.
func objectID(t time.Time, mark uint8, n uint64) string {
	return fmt.Sprintf("%08x%02x%014x", uint32(t.Unix()), mark, n&(1<<56-1))
}

// newID returns a fresh identifier, never one in use. Callers hold s.mu.
func (s *Server) newID() string {
	for {
		s.nextID++
		var id string
		if s.older {
			id = objectID(s.idClock(), generatedMark, s.nextID)
		} else {
			id = uuid7(s.idClock(), generatedMark, s.nextID)
		}
		if !s.usedIDs[id] {
			s.usedIDs[id] = true
			return id
		}
	}
}

// useID records an id chosen by a seed, so that newID never hands it out.
// Callers hold s.mu.
func (s *Server) useID(id string) { s.usedIDs[id] = true }

// badlyFormedUUID is Python's uuid.UUID error for an id it cannot parse,
// which the service answers with a 500.
const badlyFormedUUID = "badly formed hexadecimal UUID string"

// wellFormed reports whether the service would parse id. Older servers
// took ObjectIds and any other string, so under WithOlderServer every id
// is well formed and an unknown one is simply not found.
func (s *Server) wellFormed(id string) bool {
	return s.older || wellFormedUUID(id)
}

// key is the id under which the Server stores what id names. The service
// parses an id with Python's uuid.UUID and looks up that value, so
// "{0190…}", "urn:uuid:0190…", upper case and the 32 digits without hyphens
// all name the object stored as "0190…-…" in lower case. Other ids, and
// every id under WithOlderServer, are their own key.
func (s *Server) key(id string) string {
	if s.older || !wellFormedUUID(id) {
		return id
	}
	return dashed(strings.ToLower(uuidDigits(id)))
}

// find looks id up in m: as sent, and else under its key, so that an id
// seeded in another form stays reachable as it was seeded.
func find[T any](s *Server, m map[string]T, id string) (T, bool) {
	if v, ok := m[id]; ok {
		return v, true
	}
	v, ok := m[s.key(id)]
	return v, ok
}

// answerRecord answers a read of the record of m that the path's id
// names: wire's answer, built under s.mu, or when the Server holds none the
// service's: a 500 for an id it cannot parse, else status and message.
func answerRecord[T any](s *Server, m map[string]T, c *call, status int, message string, wire func(T) answer) answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch v, ok := find(s, m, c.id); {
	case ok:
		return wire(v)
	case !s.wellFormed(c.id):
		return detailAnswer(http.StatusInternalServerError, badlyFormedUUID)
	}
	return detailAnswer(status, message)
}

// uuidDigits strips what Python's uuid.UUID strips before it reads the hex
// digits: "urn:", "uuid:", braces and hyphens.
func uuidDigits(id string) string {
	id = strings.ReplaceAll(id, "urn:", "")
	id = strings.ReplaceAll(id, "uuid:", "")
	id = strings.Trim(id, "{}")
	return strings.ReplaceAll(id, "-", "")
}

// wellFormedUUID reports whether Python's uuid.UUID would parse id: 32 hex
// digits once braces, a "urn:uuid:" prefix and hyphens are removed.
func wellFormedUUID(id string) bool {
	id = uuidDigits(id)
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
