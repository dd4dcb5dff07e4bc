package agenta_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/models"
)

// VariantSource is the part of the SDK that describeVariant uses. Declared
// by the code that uses it, it lists only the methods that code calls, so a
// test can pass a small hand-written fake instead of a *agenta.Client.
type VariantSource interface {
	GetVariant(ctx context.Context, variantID string) (*models.AppVariantResponse, error)
}

// The compile-time check that *agenta.Client satisfies it: should a method's
// signature ever change, this line stops compiling, not the program.
var _ VariantSource = (*agenta.Client)(nil)

// describeVariant is the code under test: it names a variant, or says that
// there is none.
func describeVariant(ctx context.Context, variants VariantSource, id string) (string, error) {
	v, err := variants.GetVariant(ctx, id)
	switch {
	case errors.Is(err, agenta.ErrNotFound):
		return "no variant " + id, nil
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("%s, revision %d", v.VariantName, v.Revision), nil
}

// fakeVariants answers GetVariant from a map, and with the SDK's own 404
// error for any other id, which errors.Is matches as agenta.ErrNotFound.
type fakeVariants map[string]*models.AppVariantResponse

func (f fakeVariants) GetVariant(_ context.Context, id string) (*models.AppVariantResponse, error) {
	if v, ok := f[id]; ok {
		return v, nil
	}
	return nil, &agenta.APIError{StatusCode: 404, Method: "GET", Path: "/api/variants/" + id}
}

// Code that depends on an interface of its own, listing the methods it
// calls, can be tested with a hand-written fake: no server, no HTTP. In
// production, pass the *agenta.Client.
func Example_testingWithAnInterface() {
	fake := fakeVariants{
		"v-1": {VariantName: "capitals.default", Revision: 3},
	}
	for _, id := range []string{"v-1", "v-2"} {
		text, err := describeVariant(context.Background(), fake, id)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(text)
	}
	// Output:
	// capitals.default, revision 3
	// no variant v-2
}
