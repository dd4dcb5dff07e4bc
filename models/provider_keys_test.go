package models

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contractREADME holds the facts about the real service, beside the
// repository; it is never copied into it.
const contractREADME = "../../shared/contract/README.md"

// TestProviderKeyNamesAreTheContracts checks ProviderKeyNames against the
// contract README's list of lm_providers_keys names, which includes
// GEMINI_API_KEY.
func TestProviderKeyNamesAreTheContracts(t *testing.T) {
	ci := os.Getenv("CI") == "true"
	doc, err := os.ReadFile(contractREADME)
	if err != nil {
		require.False(t, ci, "CI=true, so the contract README must be readable: %v", err)
		t.Skipf("skipped: %s is absent (the contract lives in ../shared beside the repository)", contractREADME)
	}
	text := string(doc)
	start := strings.Index(text, "`lm_providers_keys` names:")
	require.GreaterOrEqual(t, start, 0, "the README no longer lists the lm_providers_keys names")
	end := strings.Index(text[start:], "another name gets a 422")
	require.Greater(t, end, 0, "the README's list of names has no end")
	want := regexp.MustCompile(`[A-Z]+_API_KEY`).FindAllString(text[start:start+end], -1)
	require.NotEmpty(t, want)
	assert.Equal(t, want, ProviderKeyNames(), "the provider key names, in the contract's order")
	assert.Contains(t, ProviderKeyNames(), GeminiAPIKey)
}
