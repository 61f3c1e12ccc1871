package controller

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-streaming/samsa/internal/metadata"
)

// SCRAM mechanism codes (Kafka's ScramMechanism) and iteration bounds.
const (
	scramSHA256        int8 = 1
	scramSHA512        int8 = 2
	scramMinIterations      = 4096
	scramMaxIterations      = 16384
)

// ScramDeletion removes a user's credential for one mechanism.
type ScramDeletion struct {
	User      string
	Mechanism int8
}

// ScramUpsertion sets a user's credential for one mechanism; the caller
// has derived the stored and server keys from the salted password.
type ScramUpsertion struct {
	User       string
	Mechanism  int8
	Iterations int32
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
}

// ScramResult is one user's outcome.
type ScramResult struct {
	User         string
	ErrorCode    int16
	ErrorMessage string
}

// AlterUserScramCredentials applies deletions and upsertions as Kafka's
// controller does: a user with any invalid alteration gets the error and
// none of its alterations; every other user's are committed together in
// one metadata log entry. Results come one per user, in request order.
func (c *Controller) AlterUserScramCredentials(deletions []ScramDeletion, upsertions []ScramUpsertion) ([]ScramResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.journal.CatchUp(context.Background()); err != nil {
		return nil, err
	}
	img := c.image.Load()
	var order []string
	failed := map[string]ScramResult{}
	seen := map[metadata.ScramKey]bool{}
	fail := func(user string, code int16, message string) {
		if _, already := failed[user]; !already {
			failed[user] = ScramResult{User: user, ErrorCode: code, ErrorMessage: message}
		}
	}
	note := func(user string, mechanism int8) {
		if !contains(order, user) {
			order = append(order, user)
		}
		key := metadata.ScramKey{User: user, Mechanism: mechanism}
		if seen[key] {
			fail(user, kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request")
		}
		seen[key] = true
		switch {
		case user == "":
			fail(user, kerr.UnacceptableCredential.Code, "Username must not be empty")
		case mechanism != scramSHA256 && mechanism != scramSHA512:
			fail(user, kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism")
		}
	}
	for _, d := range deletions {
		note(d.User, d.Mechanism)
		if _, ok := img.ScramCredential(d.User, d.Mechanism); !ok {
			fail(d.User, kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist")
		}
	}
	for _, u := range upsertions {
		note(u.User, u.Mechanism)
		switch {
		case u.Iterations < scramMinIterations:
			fail(u.User, kerr.UnacceptableCredential.Code, "Too few iterations")
		case u.Iterations > scramMaxIterations:
			fail(u.User, kerr.UnacceptableCredential.Code, "Too many iterations")
		case len(u.Salt) == 0 || len(u.StoredKey) == 0 || len(u.ServerKey) == 0:
			fail(u.User, kerr.UnacceptableCredential.Code, "Credential salt and salted password must not be empty")
		}
	}
	var recs []metadata.Record
	for _, d := range deletions {
		if _, bad := failed[d.User]; !bad {
			recs = append(recs, &metadata.RemoveUserScramCredentialRecord{Name: d.User, Mechanism: d.Mechanism})
		}
	}
	for _, u := range upsertions {
		if _, bad := failed[u.User]; !bad {
			recs = append(recs, &metadata.UserScramCredentialRecord{Name: u.User, Mechanism: u.Mechanism,
				Salt: u.Salt, StoredKey: u.StoredKey, ServerKey: u.ServerKey, Iterations: u.Iterations})
		}
	}
	if len(recs) > 0 {
		if err := c.commitLocked(context.Background(), recs); err != nil {
			return nil, err
		}
	}
	results := make([]ScramResult, 0, len(order))
	for _, user := range order {
		if r, bad := failed[user]; bad {
			results = append(results, r)
			continue
		}
		results = append(results, ScramResult{User: user})
	}
	return results, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
