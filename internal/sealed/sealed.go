// Package sealed keeps credentials in memory in a form no reflection can
// print: each value is XORed with a keystream drawn from a random key that
// lives in this package only, never in the value. A printer that walks a
// value's fields (fmt on unexported fields, go-spew with methods off, a
// test's diff) reaches random-looking bytes, never the credential, while
// two boxes sealed from the same pairs stay reflect.DeepEqual.
//
// The keystream of each value starts from a nonce drawn from the name and
// the value themselves (a keyed hash, kept before the sealed bytes), so
// two values never share one: a diff that prints a test's known key
// beside the real one sealed under the same name would otherwise give the
// real one away, by XOR.
//
// It also carries the one way, inside the module, to open the provider
// keys of a models.ProviderKeys: the SDK sets nothing and users cannot
// import it.
package sealed

import (
	"crypto/hmac"
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

// nonceSize is how many bytes of the keyed hash of a name and a value
// start its sealed form.
const nonceSize = 16

// Seal returns the nonce of name and value, then value XORed with the
// keystream of that nonce.
func Seal(name, value string) []byte {
	k := key()
	mac := hmac.New(sha256.New, k[:])
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(name)))
	mac.Write(n[:])
	mac.Write([]byte(name))
	mac.Write([]byte(value))
	out := append(mac.Sum(nil)[:nonceSize:nonceSize], value...)
	xor(out[:nonceSize], out[nonceSize:])
	return out
}

// Open returns the value Seal sealed under name.
func Open(name string, sealed []byte) string {
	if len(sealed) < nonceSize {
		return ""
	}
	out := append([]byte(nil), sealed[nonceSize:]...)
	xor(sealed[:nonceSize], out)
	return string(out)
}

// xor XORs b with SHA-256(key, counter, nonce) blocks.
func xor(nonce, b []byte) {
	k := key()
	var block [sha256.Size]byte
	for i := 0; i < len(b); i += sha256.Size {
		h := sha256.New()
		h.Write(k[:])
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(i/sha256.Size))
		h.Write(n[:])
		h.Write(nonce)
		h.Sum(block[:0])
		for j := i; j < len(b) && j < i+sha256.Size; j++ {
			b[j] ^= block[j-i]
		}
	}
}

// ProviderKeys returns the name-value pairs of a models.ProviderKeys, the
// argument; models sets it. Only the SDK's request body uses it.
var ProviderKeys func(keys any) map[string]string
