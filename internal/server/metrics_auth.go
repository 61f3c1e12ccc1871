package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/samsa-streaming/samsa/internal/api"
	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/httpserve"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/metrics"
)

// errMetricsBasicWithoutSASL is metrics(.health).authentication.method=BASIC
// on a node without SASL users to check against.
var errMetricsBasicWithoutSASL = errors.New("BASIC needs a SASL_PLAINTEXT or SASL_SSL client listener, whose users it checks")

// metricsGuard is the metrics listener's guard from
// metrics.authentication.method and metrics.health.authentication.method:
// nil when both are NONE.
func metricsGuard(cfg *config.Broker, image func() *metadata.Image, authorization *api.Authorization) (metrics.Guard, error) {
	methods := map[metrics.Endpoint]string{}
	for endpoint, key := range map[metrics.Endpoint]string{
		metrics.EndpointMetrics: "metrics.authentication.method",
		metrics.EndpointHealth:  "metrics.health.authentication.method",
	} {
		methods[endpoint], _ = cfg.Get(key)
		if methods[endpoint] == "BASIC" {
			continue
		}
		methods[endpoint] = "NONE"
	}
	if methods[metrics.EndpointMetrics] == "NONE" && methods[metrics.EndpointHealth] == "NONE" {
		return nil, nil
	}
	authenticator, err := registryAuthenticator(cfg, image)
	if err != nil {
		return nil, err
	}
	if authenticator == nil {
		return nil, fmt.Errorf("metrics.authentication.method: %w", errMetricsBasicWithoutSASL)
	}
	return func(w http.ResponseWriter, r *http.Request, endpoint metrics.Endpoint) int {
		if methods[endpoint] == "NONE" {
			return 0
		}
		principal, err := authenticator.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Basic realm="samsa"`)
			return http.StatusUnauthorized
		}
		if authorization != nil && !authorization.Authorizer.Authorize(string(principal), remoteHost(r), authz.OpDescribe, authz.ResourceCluster, authz.ClusterName) {
			return http.StatusForbidden
		}
		return 0
	}, nil
}

var _ httpserve.Authenticator = (*basicAuthenticator)(nil)

// remoteHost is the client's IP address, as ACL hosts name it.
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
