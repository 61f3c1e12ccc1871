package security

import "errors"

// ErrInvalidConfig marks ssl.* settings that cannot be used: the message
// names the key, never a password or key material.
var ErrInvalidConfig = errors.New("security: invalid configuration")

// ErrNoMatchingRule is returned when no ssl.principal.mapping.rules rule
// applies to a distinguished name.
var ErrNoMatchingRule = errors.New("security: no principal mapping rule applies")
