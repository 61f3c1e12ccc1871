package server

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-streaming/samsa/internal/registry"
)

// schemaIDChecker answers the broker's schema id validation: from this
// node's own registry when it serves one and confluent.schema.registry.url
// is empty, else over HTTP from the URL, remembering up to
// confluent.schema.registry.max.cache.size registered pairs.
type schemaIDChecker struct {
	local  atomic.Pointer[registry.Registry]
	remote atomic.Pointer[sr.Client]
	// cacheSize bounds cached.
	cacheSize int
	mu        struct {
		sync.Mutex
		// Invariant: len(cached) <= cacheSize.
		cached map[schemaPair]struct{}
	}
}

type schemaPair struct {
	subject string
	id      int32
}

var errNoSchemaRegistry = errors.New("no schema registry: set confluent.schema.registry.url or schema.registry.listeners")

// Registered implements api.SchemaIDChecker.
func (c *schemaIDChecker) Registered(ctx context.Context, subject string, id int32) (bool, error) {
	if local := c.local.Load(); local != nil {
		return local.Registered(ctx, subject, id)
	}
	remote := c.remote.Load()
	if remote == nil {
		return false, errNoSchemaRegistry
	}
	pair := schemaPair{subject, id}
	c.mu.Lock()
	_, hit := c.mu.cached[pair]
	c.mu.Unlock()
	if hit {
		return true, nil
	}
	uses, err := remote.SchemaVersionsByID(ctx, int(id))
	if err != nil {
		var response *sr.ResponseError
		if errors.As(err, &response) && response.ErrorCode == 40403 {
			return false, nil
		}
		return false, err
	}
	for _, use := range uses {
		if use.Subject == subject {
			c.mu.Lock()
			if len(c.mu.cached) >= c.cacheSize {
				for evicted := range c.mu.cached {
					delete(c.mu.cached, evicted)
					break
				}
			}
			c.mu.cached[pair] = struct{}{}
			c.mu.Unlock()
			return true, nil
		}
	}
	return false, nil
}

// startSchemaValidation points the broker's schema id validation at its
// registry, once the node's own registry (if any) runs.
func (n *Node) startSchemaValidation() error {
	checker := n.schemaIDs
	checker.cacheSize = int(registryInt(n.cfg.Get("confluent.schema.registry.max.cache.size")))
	checker.mu.cached = map[schemaPair]struct{}{}
	if url, _ := n.cfg.Get("confluent.schema.registry.url"); url != "" {
		client, err := sr.NewClient(sr.URLs(url), sr.UserAgent("samsa-schema-validation"))
		if err != nil {
			return err
		}
		checker.remote.Store(client)
		return nil
	}
	if n.registry != nil {
		checker.local.Store(n.registry.registry)
	}
	return nil
}
