// Package sealed keeps credentials in memory in a form no reflection can
// print: each value is XORed with a keystream drawn from a random key that
// lives in this package only, never in the value. A printer that walks a
// value's fields (fmt on unexported fields, go-spew with methods off, a
// test's diff) reaches random-looking bytes, never the credential, while
// two boxes sealed from the same pairs stay reflect.DeepEqual.
//
// It also carries the one way, inside the module, to open the provider
// keys of a models.ProviderKeys: the SDK sets nothing and users cannot
// import it.
package sealed

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// key is the process's sealing key, drawn on first use.
var key = sync.OnceValue(func() [32]byte {
	var k [32]byte
	_, _ = rand.Read(k[:]) // crypto/rand.Read never fails (Go 1.24)
	return k
})

// Seal returns value XORed with the keystream of name.
func Seal(name, value string) []byte {
	out := []byte(value)
	xor(name, out)
	return out
}

// Open returns the value Seal sealed under name.
func Open(name string, sealed []byte) string {
	out := append([]byte(nil), sealed...)
	xor(name, out)
	return string(out)
}

// xor XORs b with SHA-256(key, name, counter) blocks.
func xor(name string, b []byte) {
	k := key()
	var block [sha256.Size]byte
	for i := 0; i < len(b); i += sha256.Size {
		h := sha256.New()
		h.Write(k[:])
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(i/sha256.Size))
		h.Write(n[:])
		h.Write([]byte(name))
		h.Sum(block[:0])
		for j := i; j < len(b) && j < i+sha256.Size; j++ {
			b[j] ^= block[j-i]
		}
	}
}

// ProviderKeys returns the name-value pairs of a models.ProviderKeys, the
// argument; models sets it. Only the SDK's request body uses it.
var ProviderKeys func(keys any) map[string]string
