package agenta

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func TestNewClientFromEnv(t *testing.T) {
	const key = "ag-env-key-0123456789abcdef"
	tests := []struct {
		name     string
		host     string // "-" leaves AGENTA_HOST unset
		key      string // "-" leaves AGENTA_API_KEY unset
		opts     []Option
		wantBase string
		wantAuth string
		wantErr  string // a part of the error; "" means no error
	}{
		{name: "host without a path gets /api", host: "https://cloud.agenta.ai", key: "-",
			wantBase: "https://cloud.agenta.ai/api"},
		{name: "host with only a slash gets /api", host: "http://127.0.0.1:8080/", key: "-",
			wantBase: "http://127.0.0.1:8080/api"},
		{name: "host with /api is kept", host: "https://agenta.example.com/api/", key: "-",
			wantBase: "https://agenta.example.com/api"},
		{name: "host with another path is kept", host: "https://example.com/agenta/api", key: "-",
			wantBase: "https://example.com/agenta/api"},
		{name: "key is sent verbatim", host: "https://cloud.agenta.ai", key: key,
			wantBase: "https://cloud.agenta.ai/api", wantAuth: key},
		{name: "empty key sends no header", host: "https://cloud.agenta.ai", key: "",
			wantBase: "https://cloud.agenta.ai/api"},
		{name: "WithAPIKey overrides the key", host: "https://cloud.agenta.ai", key: key,
			opts:     []Option{WithAPIKey("ag-option-key-0123456789")},
			wantBase: "https://cloud.agenta.ai/api", wantAuth: "ag-option-key-0123456789"},
		{name: "an Authorization header overrides the key", host: "https://cloud.agenta.ai", key: key,
			opts:     []Option{WithHeader("Authorization", "Bearer jwt-0123456789")},
			wantBase: "https://cloud.agenta.ai/api", wantAuth: "Bearer jwt-0123456789"},
		{name: "WithBaseURL overrides the host", host: "https://cloud.agenta.ai", key: "-",
			opts:     []Option{WithBaseURL("http://127.0.0.1:9/prefix/api")},
			wantBase: "http://127.0.0.1:9/prefix/api"},
		{name: "WithBaseURL stands in for a missing host", host: "-", key: "-",
			opts:     []Option{WithBaseURL("http://127.0.0.1:9/api")},
			wantBase: "http://127.0.0.1:9/api"},
		{name: "missing host", host: "-", key: key,
			wantErr: "AGENTA_HOST: is not set; set it to your server's URL"},
		{name: "empty host", host: "", key: "-",
			wantErr: "AGENTA_HOST: is not set"},
		{name: "bad host is named", host: "ftp://example.com", key: "-",
			wantErr: `AGENTA_HOST: must use http or https, got scheme "ftp"`},
		{name: "bad WithBaseURL is named", host: "https://cloud.agenta.ai", key: "-",
			opts:    []Option{WithBaseURL("ftp://example.com")},
			wantErr: `WithBaseURL: must use http or https`},
		{name: "key with a newline is refused without echoing it", host: "https://cloud.agenta.ai", key: key + "\n",
			wantErr: "AGENTA_API_KEY: contains CR, LF or another control character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setenv(t, "AGENTA_HOST", tt.host)
			setenv(t, "AGENTA_API_KEY", tt.key)
			c, err := NewClientFromEnv(tt.opts...)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("NewClientFromEnv() = %v, want an error containing %q", c, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NewClientFromEnv() error = %q, want ErrInvalidArgument containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), key) {
					t.Fatalf("error %q shows the API key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClientFromEnv() error = %v, want none", err)
			}
			if got := c.BaseURL(); got != tt.wantBase {
				t.Errorf("BaseURL() = %q, want %q", got, tt.wantBase)
			}
			if got := c.header.Get("Authorization"); got != tt.wantAuth {
				t.Errorf("Authorization = %q, want %q", got, tt.wantAuth)
			}
			if n := len(c.header.Values("Authorization")); n > 1 {
				t.Errorf("%d Authorization headers, want at most 1", n)
			}
		})
	}
}

// TestNewClientFromEnvSendsNoHeaderWithoutKey checks on the wire that an
// unset AGENTA_API_KEY sends no Authorization header at all, where
// WithAPIKey(os.Getenv(...)) would have refused the empty key.
func TestNewClientFromEnvSendsNoHeaderWithoutKey(t *testing.T) {
	var got []string
	var seen bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, seen = r.Header.Values("Authorization"), true
		if r.URL.Path != "/api/variants/v1" {
			t.Errorf("path = %q, want /api/variants/v1", r.URL.Path)
		}
		w.Write([]byte(`{"variant_id":"v1"}`))
	}))
	t.Cleanup(srv.Close)
	setenv(t, "AGENTA_HOST", srv.URL)
	setenv(t, "AGENTA_API_KEY", "-")
	c, err := NewClientFromEnv()
	if err != nil {
		t.Fatalf("NewClientFromEnv() error = %v", err)
	}
	if _, err := c.GetVariant(context.Background(), "v1"); err != nil {
		t.Fatalf("GetVariant() error = %v", err)
	}
	if !seen || len(got) != 0 {
		t.Fatalf("request seen %v with Authorization %q, want one request without the header", seen, got)
	}
}

// setenv sets name to value for the test, or unsets it when value is "-".
func setenv(t *testing.T, name, value string) {
	t.Helper()
	t.Setenv(name, value) // restores the old value after the test
	if value == "-" {
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
}

// A credential in AGENTA_HOST (user information, a query) never shows in
// the refusal, however the URL is malformed.
func TestHostCredentialsNeverShown(t *testing.T) {
	for _, host := range []string{
		"https://admin:pw-SECRET@cloud.example/api",
		"https://tok-SECRET@cloud.example",
		"http://127.0.0.1:8080/api?api_key=SECRET",
		"http://127.0.0.1:8080/api?SECRET",
		"http://127.0.0.1:8080/api#SECRET",
		"http://u:SECRET@[::1",
		"http://u:p%zzSECRET@host/api",
		"http://u:SECRET@host:port/api",
		"u:SECRET@host/api",
		"host:8080/api?key=SECRET",
		// A password with a character that ends the authority, unescaped.
		"https://user:SE/CRET@cloud.example/api",
		"https://user:1234/SECRET@cloud.example/api",
		"https://tok/SECRET@cloud.example/api",
		"https://user:SE#CRET@cloud.example/api",
		"https://user:SE?CRET@cloud.example/api",
	} {
		t.Setenv("AGENTA_HOST", host)
		_, err := NewClientFromEnv()
		if err == nil {
			t.Errorf("AGENTA_HOST=%q: accepted, want a refusal", host)
			continue
		}
		if strings.Contains(err.Error(), "CRET") { // SECRET, or the end of SE/CRET
			t.Errorf("AGENTA_HOST=%q: %q shows the credential", host, err)
		}
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("AGENTA_HOST=%q: %v, want ErrInvalidArgument", host, err)
		}
	}
}
