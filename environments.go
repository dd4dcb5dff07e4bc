package agenta

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/agenta-go/agenta/internal/text"
	"github.com/agenta-go/agenta/models"
)

// environmentLookupBug is what every self-hosted 0.19 server answers to
// GET /apps/get_variant_by_env: its route calls a db_manager function that
// had been deleted. The same server lists an app's environments, each with
// its deployed variant's id, which is what variantByEnvironmentListed reads.
const environmentLookupBug = "get_app_variant_by_app_name_and_environment"

// environment is one element of GET /apps/{app_id}/environments/ on a
// mid-2024 server; only what the fallback needs.
type environment struct {
	Name                 string  `json:"name"`
	DeployedAppVariantID *string `json:"deployed_app_variant_id"`
}

// lookupBroken reports whether err is the 0.19 server's own 500 for the
// environment lookup, and only that: another 500 is the server's answer.
func lookupBroken(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusInternalServerError &&
		strings.Contains(apiErr.Message, environmentLookupBug)
}

// variantByEnvironmentListed is GetVariantByEnvironment on a server whose
// lookup route is broken (lookupBroken): the app's environments, then the
// variant deployed to the one named. An environment the app does not have,
// or one with nothing deployed, is ErrNotFound. The lookup's own 500 is
// kept in the error when the fallback fails too.
func (c *Client) variantByEnvironmentListed(ctx context.Context, appID, name string, broken error) (*models.AppVariantResponse, error) {
	id, err := segment("appID", "app_id", appID)
	if err != nil {
		return nil, err
	}
	envs, err := getList(ctx, c, &request{
		operation: "GetVariantByEnvironment", method: http.MethodGet, path: "/apps/" + id + "/environments/",
	}, jsonList[environment])
	if err != nil {
		return nil, fmt.Errorf("%w (read after the lookup failed: %w)", err, broken)
	}
	names := make([]string, 0, len(envs))
	for _, env := range envs {
		if env.Name != name {
			names = append(names, env.Name)
			continue
		}
		if env.DeployedAppVariantID == nil || *env.DeployedAppVariantID == "" {
			return nil, &notDeployedError{app: appID, environment: name}
		}
		return c.GetVariant(ctx, *env.DeployedAppVariantID)
	}
	// The names are the server's: scrubbed and bounded like its messages.
	return nil, &notDeployedError{app: appID, environment: name, names: c.text(strings.Join(names, ", "), maxMessage)}
}

// notDeployedError says that an app has nothing deployed to an environment,
// or no environment of that name; errors.Is(err, ErrNotFound) holds.
type notDeployedError struct {
	app, environment string
	names            string // the app's environments, when it has none of that name
}

func (e *notDeployedError) Error() string {
	if e.names == "" {
		return text.Clip(fmt.Sprintf("agenta: app %s has no variant deployed to %q", e.app, e.environment), 2*maxMessage)
	}
	return text.Clip(fmt.Sprintf("agenta: app %s has no environment %q (it has %s)",
		e.app, e.environment, e.names), 2*maxMessage)
}

// Is matches ErrNotFound.
func (e *notDeployedError) Is(target error) bool { return target == ErrNotFound }
