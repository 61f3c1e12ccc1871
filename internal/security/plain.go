package security

// PLAIN (RFC 4616): one client message, authzid NUL authcid NUL password,
// in UTF-8. Kafka requires the authorization id, when given, to equal the
// user name. The password is checked against the listener's JAAS users
// (user_<name>="<password>") and then against the user's SCRAM
// credentials, so SCRAM users can log in with PLAIN too; every comparison
// is constant-time, and the same failure answers an unknown user and a
// wrong password.

import (
	"bytes"
	"crypto/subtle"
	"fmt"
)

// maxPlainFieldBytes bounds each field of a PLAIN message (RFC 4616's 255
// characters of UTF-8, at up to four bytes each).
const maxPlainFieldBytes = 1020

// ParsePlain splits a PLAIN message into its authorization id, user and
// password.
func ParsePlain(message []byte) (authzid, user, password string, err error) {
	fields := bytes.Split(message, []byte{0})
	if len(fields) != 3 {
		return "", "", "", fmt.Errorf("%w: Invalid SASL/PLAIN response: expected 3 tokens, got %d", ErrAuthenticationFailed, len(fields))
	}
	for _, f := range fields {
		if len(f) > maxPlainFieldBytes {
			return "", "", "", fmt.Errorf("%w: Invalid SASL/PLAIN response: field too long", ErrAuthenticationFailed)
		}
	}
	authzid, user, password = string(fields[0]), string(fields[1]), string(fields[2])
	if user == "" {
		return "", "", "", fmt.Errorf("%w: Authentication failed: username not specified", ErrAuthenticationFailed)
	}
	if password == "" {
		return "", "", "", fmt.Errorf("%w: Authentication failed: password not specified", ErrAuthenticationFailed)
	}
	if authzid != "" && authzid != user {
		return "", "", "", fmt.Errorf("%w: Authentication failed: Client requested an authorization id that is different from username", ErrAuthenticationFailed)
	}
	return authzid, user, password, nil
}

type plainExchange struct {
	users       map[string]string
	credentials CredentialStore
	done        bool
}

func (e *plainExchange) next(token []byte) ([]byte, *outcome, error) {
	if e.done {
		return nil, nil, fmt.Errorf("%w: PLAIN exchange already complete", ErrIllegalSASLState)
	}
	e.done = true
	_, user, password, err := ParsePlain(token)
	if err != nil {
		return nil, nil, err
	}
	if !e.passwordMatches(user, password) {
		return nil, nil, ErrAuthenticationFailed
	}
	return nil, &outcome{principal: "User:" + user}, nil
}

func (e *plainExchange) passwordMatches(user, password string) bool {
	return plainPasswordMatches(e.users, e.credentials, user, password)
}

// CheckPlainPassword checks a user name and password exactly as a PLAIN
// exchange does, against JAAS users and then SCRAM credentials, for
// callers that receive them another way (HTTP basic auth). It returns nil
// or ErrAuthenticationFailed, the same for an unknown user and a wrong
// password.
func CheckPlainPassword(users map[string]string, credentials CredentialStore, user, password string) error {
	if user == "" || password == "" || len(user) > maxPlainFieldBytes || len(password) > maxPlainFieldBytes {
		return ErrAuthenticationFailed
	}
	if !plainPasswordMatches(users, credentials, user, password) {
		return ErrAuthenticationFailed
	}
	return nil
}

func plainPasswordMatches(users map[string]string, credentials CredentialStore, user, password string) bool {
	if expected, ok := users[user]; ok {
		if subtle.ConstantTimeCompare([]byte(expected), []byte(password)) == 1 {
			return true
		}
	}
	if credentials == nil {
		return false
	}
	found := false
	for _, m := range []ScramMechanism{ScramSHA512, ScramSHA256} {
		credential, ok := credentials.ScramCredential(user, m)
		if !ok {
			continue
		}
		found = true
		salted, err := SaltPassword(m, password, credential.Salt, int(credential.Iterations))
		if err != nil {
			continue
		}
		derived := CredentialFromSaltedPassword(m, credential.Salt, salted, credential.Iterations)
		if subtle.ConstantTimeCompare(derived.StoredKey, credential.StoredKey) == 1 {
			return true
		}
	}
	if !found {
		// Spend what checking a credential costs, so the time taken does
		// not tell an unknown user from a wrong password.
		SaltPassword(ScramSHA512, password, []byte("samsa-unknown-user"), ScramMinIterations)
	}
	return false
}
