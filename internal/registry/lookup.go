package registry

import (
	"context"
	"fmt"
	"slices"
)

// Registered reports whether schema id is registered, and not soft
// deleted, under subject: the question the broker's schema id validation
// asks (confluent.value.schema.validation). A miss catches up with the end
// of _schemas once and asks again, so a schema registered through another
// node an instant ago is found.
func (r *Registry) Registered(ctx context.Context, subject string, id int32) (bool, error) {
	if err := r.waitReady(ctx); err != nil {
		return false, fmt.Errorf("%w: %v", errStore, err)
	}
	if r.registeredUnder(subject, int(id)) {
		return true, nil
	}
	if err := r.catchUp(ctx); err != nil {
		return false, fmt.Errorf("%w: %v", errStore, err)
	}
	return r.registeredUnder(subject, int(id)), nil
}

func (r *Registry) registeredUnder(subject string, id int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.state.schemas[id] == nil || r.mu.state.subjects[subject] == nil {
		return false
	}
	return slices.ContainsFunc(r.mu.state.sortedVersions(subject, false), func(v *version) bool { return v.ID == id })
}
