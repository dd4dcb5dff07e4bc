package agentatest

import (
	"net/http"
	"slices"
)

// OpListEnvironments is the service's read of an app's environments, GET
// /apps/{app_id}/environments/, each with the variant deployed there. It is
// not in the published document; the SDK reads it where the environment
// lookup (OpGetVariantByEnvironment) is broken (WithBrokenEnvironmentLookup).
const OpListEnvironments Operation = "list_environments"

// appEnvironments are the environments every app has on the service.
var appEnvironments = []string{"development", "staging", "production"}

// handleListEnvironments answers as a 0.19 server does: the three
// environments, then any other one a test deployed to, in order; nothing
// deployed is null, its revision id the string "None" (Python's str(None)).
// An unknown app is a 500, as there.
func (s *Server) handleListEnvironments(c *call) answer {
	return answerRecord(s, s.apps, c, http.StatusInternalServerError, "'NoneType' object has no attribute 'uuid'", func(app *appRecord) answer {
		names := slices.Clone(appEnvironments)
		var others []string
		for name := range app.environments {
			if !slices.Contains(names, name) {
				others = append(others, name)
			}
		}
		slices.Sort(others)
		list := make([]any, 0, len(names)+len(others))
		for _, name := range append(names, others...) {
			o := object{{"name", name}, {"app_id", app.ID}}
			v, deployed := s.variants[app.environments[name]]
			if !deployed {
				o = append(o, field{"deployed_app_variant_id", nil}, field{"deployed_variant_name", nil},
					field{"deployed_app_variant_revision_id", "None"}, field{"revision", nil})
			} else {
				o = append(o, field{"deployed_app_variant_id", v.id},
					field{"deployed_variant_name", s.bases[v.baseID].Name + "." + v.configName},
					field{"deployed_app_variant_revision_id", v.revisionIDs[v.revision]}, field{"revision", v.revision})
			}
			list = append(list, o)
		}
		return jsonAnswer(http.StatusOK, list)
	})
}
