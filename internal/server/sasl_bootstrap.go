package server

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/samsa-streaming/samsa/internal/config"
	"github.com/samsa-streaming/samsa/internal/metadata"
	"github.com/samsa-streaming/samsa/internal/security"
)

// bootstrapScramRecords turns samsa.scram.bootstrap.users, the equivalent
// of kafka-storage format --add-scram, into the credential records written
// with the cluster id when the metadata log is new:
//
//	MECHANISM=[name=<user>,password=<password>(,iterations=<n>)] {"," ...}
//
// A value may be double-quoted to hold commas or brackets (a backslash
// escapes the next character). iterations defaults to 4096, the minimum.
// Only the salted keys are written; the password is not kept.
func bootstrapScramRecords(spec string) ([]metadata.Record, error) {
	entries, err := splitBootstrapEntries(spec)
	if err != nil {
		return nil, err
	}
	var recs []metadata.Record
	for _, entry := range entries {
		mechanismName, body, ok := strings.Cut(entry, "=")
		mechanism := security.ScramMechanismByName(strings.TrimSpace(mechanismName))
		if !ok || mechanism == security.ScramUnknown {
			return nil, fmt.Errorf("samsa.scram.bootstrap.users: entry must start with SCRAM-SHA-256= or SCRAM-SHA-512=")
		}
		body = strings.TrimSpace(body)
		if !strings.HasPrefix(body, "[") || !strings.HasSuffix(body, "]") {
			return nil, fmt.Errorf("samsa.scram.bootstrap.users: %s: the user must be given as [name=...,password=...]", mechanismName)
		}
		fields, err := splitBootstrapFields(body[1 : len(body)-1])
		if err != nil {
			return nil, err
		}
		name, password := fields["name"], fields["password"]
		if name == "" || password == "" {
			return nil, fmt.Errorf("samsa.scram.bootstrap.users: %s entry needs name and password", mechanismName)
		}
		iterations := int64(security.ScramMinIterations)
		if s, ok := fields["iterations"]; ok {
			iterations, err = strconv.ParseInt(s, 10, 32)
			if err != nil || iterations < security.ScramMinIterations || iterations > security.ScramMaxIterations {
				return nil, fmt.Errorf("samsa.scram.bootstrap.users: user %s: iterations must be %d to %d", name, security.ScramMinIterations, security.ScramMaxIterations)
			}
		}
		credential, err := security.NewScramCredential(mechanism, password, int32(iterations))
		if err != nil {
			return nil, err
		}
		recs = append(recs, &metadata.UserScramCredentialRecord{Name: name, Mechanism: int8(mechanism),
			Salt: credential.Salt, StoredKey: credential.StoredKey, ServerKey: credential.ServerKey, Iterations: credential.Iterations})
	}
	return recs, nil
}

// splitBootstrapEntries splits at commas outside brackets and quotes.
func splitBootstrapEntries(spec string) ([]string, error) {
	var entries []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(spec); i++ {
		switch c := spec[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == ',' && depth == 0:
			entries = append(entries, spec[start:i])
			start = i + 1
		}
	}
	if quoted || depth != 0 {
		return nil, fmt.Errorf("samsa.scram.bootstrap.users: unbalanced brackets or quotes")
	}
	if rest := strings.TrimSpace(spec[start:]); rest != "" {
		entries = append(entries, rest)
	}
	return entries, nil
}

// splitBootstrapFields parses key=value pairs separated by commas, values
// optionally double-quoted.
func splitBootstrapFields(body string) (map[string]string, error) {
	fields := map[string]string{}
	for i := 0; i < len(body); {
		eq := strings.IndexByte(body[i:], '=')
		if eq < 0 {
			return nil, fmt.Errorf("samsa.scram.bootstrap.users: expected key=value")
		}
		key := strings.TrimSpace(body[i : i+eq])
		i += eq + 1
		var value strings.Builder
		if i < len(body) && body[i] == '"' {
			i++
			for ; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				value.WriteByte(body[i])
			}
			if i >= len(body) {
				return nil, fmt.Errorf("samsa.scram.bootstrap.users: unterminated quote")
			}
			i++
		} else {
			for ; i < len(body) && body[i] != ','; i++ {
				value.WriteByte(body[i])
			}
		}
		fields[key] = value.String()
		for i < len(body) && (body[i] == ',' || body[i] == ' ') {
			i++
		}
	}
	return fields, nil
}

// bootstrapScramUsers reads samsa.scram.bootstrap.users, when set.
func bootstrapScramUsers(cfg *config.Broker) ([]metadata.Record, error) {
	spec, ok := cfg.Get("samsa.scram.bootstrap.users")
	if !ok || strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	return bootstrapScramRecords(spec)
}
