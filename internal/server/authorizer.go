package server

import (
	"github.com/samsa-streaming/samsa/internal/api"
	"github.com/samsa-streaming/samsa/internal/authz"
	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/controller"
	"github.com/samsa-streaming/samsa/internal/metadata"
)

// newAuthorization builds the node's authorizer when authorizer.class.name
// names it (nil otherwise) and keeps its index in step with the ACLs of the
// metadata image: a change of the image's ACL set swaps in a new index, so
// every broker applies the ACLs it has replayed.
func newAuthorization(cfg *config.Broker, ctrl *controller.Controller) *api.Authorization {
	if !cfg.AuthorizerEnabled() {
		return nil
	}
	a := authz.New(authz.Settings{SuperUsers: cfg.SuperUsers(), AllowEveryoneIfNoACLFound: cfg.AllowEveryoneIfNoACLFound()})
	ctrl.Subscribe(func(old, next *metadata.Image) {
		if old.ACLs() != next.ACLs() || old.Offset < 0 {
			a.Replace(controller.Bindings(next))
		}
	})
	return api.NewAuthorization(a)
}
