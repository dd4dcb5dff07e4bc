// Package models holds the request and response shapes of the Agenta
// evaluation and variant service.
//
// Field names follow the service's JSON names in Go's initialism style
// (app_id becomes AppID). Every type marshals back to the wire shape it was
// decoded from, so values can be stored or forwarded. Decoding is tolerant of
// what real servers send: explicit nulls in optional fields, timestamps
// without a zone, unknown fields and enum values the SDK does not know yet.
package models
