package agentatest_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agenta-go/agenta"
	"github.com/agenta-go/agenta/agentatest"
	"github.com/agenta-go/agenta/models"
)

// Not parallel: these tests change the process's AGENTA_HOST.

func TestStartDemoUnlessHost(t *testing.T) {
	tests := []struct {
		name   string
		before *string // AGENTA_HOST before the call; nil means unset
	}{
		{"unset", nil},
		{"empty", ptr("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AGENTA_HOST", "") // restores the outer value afterwards
			if tt.before == nil {
				require.NoError(t, os.Unsetenv("AGENTA_HOST"))
			}

			demo, stop := agentatest.StartDemoUnlessHost()
			require.NotNil(t, demo, "without AGENTA_HOST a demo server must start")
			host := os.Getenv("AGENTA_HOST")
			require.NotEmpty(t, host, "AGENTA_HOST must point at the demo server")

			client, err := agenta.NewClientFromEnv(agenta.WithMaxRetries(0))
			require.NoError(t, err)
			v, err := client.GetVariantByEnvironment(context.Background(), demo.AppID, models.EnvironmentProduction)
			require.NoError(t, err, "the client from the environment must reach the demo server at %s", host)
			assert.Equal(t, demo.VariantID, v.VariantID)

			stop()
			value, set := os.LookupEnv("AGENTA_HOST")
			if tt.before == nil {
				assert.False(t, set, "stop must unset AGENTA_HOST again, got %q", value)
			} else {
				assert.Equal(t, *tt.before, value, "stop must restore AGENTA_HOST")
			}
			_, err = client.GetVariant(context.Background(), demo.VariantID)
			assert.Error(t, err, "the demo server must be closed after stop")
		})
	}
}

func TestStartDemoUnlessHostLeavesAHostAlone(t *testing.T) {
	t.Setenv("AGENTA_HOST", "http://127.0.0.1:1")
	demo, stop := agentatest.StartDemoUnlessHost()
	require.NotNil(t, stop, "stop is never nil")
	stop()
	assert.Nil(t, demo, "with AGENTA_HOST set no demo starts")
	assert.Equal(t, "http://127.0.0.1:1", os.Getenv("AGENTA_HOST"), "AGENTA_HOST must be left as it was")
}

func ptr(s string) *string { return &s }

// A program that talks to the server in AGENTA_HOST, or, when none is set,
// to an embedded fake loaded with the demo data. (It has no Output line:
// with AGENTA_HOST set, it would print what that server holds.)
func ExampleStartDemoUnlessHost() {
	demo, stop := agentatest.StartDemoUnlessHost()
	defer stop()
	client, err := agenta.NewClientFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	appID := os.Getenv("AGENTA_APP_ID")
	if demo != nil {
		appID = demo.AppID
	}
	v, err := client.GetVariantByEnvironment(context.Background(), appID, models.EnvironmentProduction)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.VariantName, "serves production")
}
