package authz

import "sync/atomic"

// Authorizer is the node's authorizer: the current Index, swapped whole when
// the ACLs or settings change. Checks load the pointer and take no lock.
type Authorizer struct {
	index atomic.Pointer[Index]
}

// New returns an authorizer with no ACLs under settings.
func New(settings Settings) *Authorizer {
	a := &Authorizer{}
	a.index.Store(NewIndex(nil, settings))
	return a
}

// Index is the current index.
func (a *Authorizer) Index() *Index { return a.index.Load() }

// Replace installs an index of bindings, keeping the settings.
func (a *Authorizer) Replace(bindings []Binding) {
	a.index.Store(NewIndex(bindings, a.index.Load().settings))
}

// Authorize is Index.Authorize on the current index.
func (a *Authorizer) Authorize(principal, host string, operation Operation, resourceType ResourceType, name string) bool {
	return a.index.Load().Authorize(principal, host, operation, resourceType, name)
}
