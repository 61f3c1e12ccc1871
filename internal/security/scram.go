package security

// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka does them:
// no SASLprep of the user name or password, no channel binding, 4096 to
// 16384 iterations, and client-first extensions (tokenauth=true for
// delegation tokens, KIP-48).
//
//	client-first  gs2-header client-first-bare
//	              gs2-header = "n," [ "a=" authzid ] ","   ("y" is accepted too)
//	              client-first-bare = "n=" user ",r=" nonce *("," key "=" value)
//	server-first  "r=" nonce servernonce ",s=" base64(salt) ",i=" iterations
//	client-final  "c=" base64(gs2-header) ",r=" nonce servernonce ",p=" base64(proof)
//	server-final  "v=" base64(ServerSignature)
//
// The stored credential is the salt, the iteration count,
// StoredKey = H(HMAC(SaltedPassword, "Client Key")) and
// ServerKey = HMAC(SaltedPassword, "Server Key"); never the password.

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// ScramMechanism is Kafka's ScramMechanism type code.
type ScramMechanism int8

// SCRAM mechanisms, with Kafka's codes.
const (
	ScramUnknown ScramMechanism = 0
	ScramSHA256  ScramMechanism = 1
	ScramSHA512  ScramMechanism = 2
)

// SCRAM iteration bounds (Kafka's ScramMechanism.minIterations and the
// controller's maximum).
const (
	ScramMinIterations = 4096
	ScramMaxIterations = 16384
)

// scramNonceBytes is the server nonce's random part.
const scramNonceBytes = 24

// ScramMechanismByName maps "SCRAM-SHA-256"/"SCRAM-SHA-512" to the code.
func ScramMechanismByName(name string) ScramMechanism {
	switch name {
	case MechanismScramSHA256:
		return ScramSHA256
	case MechanismScramSHA512:
		return ScramSHA512
	}
	return ScramUnknown
}

// Name is the mechanism's SASL name.
func (m ScramMechanism) Name() string {
	switch m {
	case ScramSHA256:
		return MechanismScramSHA256
	case ScramSHA512:
		return MechanismScramSHA512
	}
	return "UNKNOWN"
}

func (m ScramMechanism) hash() func() hash.Hash {
	if m == ScramSHA512 {
		return sha512.New
	}
	return sha256.New
}

// ScramCredential is a user's stored SCRAM credential.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// CredentialStore finds SCRAM credentials. The server reads them from the
// metadata image, lock-free.
type CredentialStore interface {
	ScramCredential(user string, mechanism ScramMechanism) (ScramCredential, bool)
}

// SaltPassword is Hi(password, salt, iterations) of RFC 5802.
func SaltPassword(m ScramMechanism, password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(m.hash(), password, salt, iterations, m.hash()().Size())
}

// CredentialFromSaltedPassword derives the stored credential, as the
// controller does for AlterUserScramCredentials (whose clients send the
// salted password, never the password).
func CredentialFromSaltedPassword(m ScramMechanism, salt, saltedPassword []byte, iterations int32) ScramCredential {
	clientKey := hmacOf(m, saltedPassword, []byte("Client Key"))
	storedKey := m.hash()()
	storedKey.Write(clientKey)
	return ScramCredential{
		Salt:       salt,
		StoredKey:  storedKey.Sum(nil),
		ServerKey:  hmacOf(m, saltedPassword, []byte("Server Key")),
		Iterations: iterations,
	}
}

// NewScramCredential salts password with a random salt.
func NewScramCredential(m ScramMechanism, password string, iterations int32) (ScramCredential, error) {
	salt := []byte(rand.Text())
	salted, err := SaltPassword(m, password, salt, int(iterations))
	if err != nil {
		return ScramCredential{}, err
	}
	return CredentialFromSaltedPassword(m, salt, salted, iterations), nil
}

func hmacOf(m ScramMechanism, key, message []byte) []byte {
	mac := hmac.New(m.hash(), key)
	mac.Write(message)
	return mac.Sum(nil)
}

// ScramClientFirst is a parsed client-first message.
type ScramClientFirst struct {
	GS2Header  string
	User       string
	Nonce      string
	Bare       string
	Extensions map[string]string
}

// errScramMalformed is a message that is not SCRAM.
var errScramMalformed = errors.New("security: malformed SCRAM message")

// ParseScramClientFirst parses a client-first message.
func ParseScramClientFirst(message string) (ScramClientFirst, error) {
	var out ScramClientFirst
	parts := strings.SplitN(message, ",", 3)
	if len(parts) != 3 {
		return out, errScramMalformed
	}
	switch parts[0] {
	case "n", "y":
	default:
		// "p=..." asks for channel binding, which Kafka does not offer.
		return out, fmt.Errorf("%w: channel binding not supported", errScramMalformed)
	}
	authzid := ""
	if parts[1] != "" {
		value, ok := strings.CutPrefix(parts[1], "a=")
		if !ok {
			return out, errScramMalformed
		}
		var err error
		if authzid, err = scramUnescape(value); err != nil {
			return out, err
		}
	}
	out.GS2Header = parts[0] + "," + parts[1] + ","
	out.Bare = parts[2]
	attributes := strings.Split(parts[2], ",")
	if len(attributes) < 2 || !strings.HasPrefix(attributes[0], "n=") || !strings.HasPrefix(attributes[1], "r=") {
		return out, errScramMalformed
	}
	user, err := scramUnescape(attributes[0][2:])
	if err != nil {
		return out, err
	}
	out.User, out.Nonce = user, attributes[1][2:]
	if out.User == "" || out.Nonce == "" || strings.ContainsAny(out.Nonce, ",") {
		return out, errScramMalformed
	}
	if authzid != "" && authzid != out.User {
		return out, fmt.Errorf("%w: authorization id differs from the user name", errScramMalformed)
	}
	for _, attribute := range attributes[2:] {
		key, value, ok := strings.Cut(attribute, "=")
		if !ok || key == "" {
			return out, errScramMalformed
		}
		if out.Extensions == nil {
			out.Extensions = make(map[string]string)
		}
		out.Extensions[key] = value
	}
	return out, nil
}

// scramUnescape decodes "=2C" and "=3D" in a SCRAM name; any other "="
// is malformed (RFC 5802 section 5.1).
func scramUnescape(s string) (string, error) {
	if !strings.Contains(s, "=") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			b.WriteByte(s[i])
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "=2C"):
			b.WriteByte(',')
		case strings.HasPrefix(s[i:], "=3D"):
			b.WriteByte('=')
		default:
			return "", errScramMalformed
		}
		i += 2
	}
	return b.String(), nil
}

// scramExchange is the server side of one SCRAM exchange.
type scramExchange struct {
	mechanism   ScramMechanism
	credentials CredentialStore
	// step is 0 before client-first, 1 before client-final, 2 done.
	step        int
	first       ScramClientFirst
	serverFirst string
	nonce       string
	credential  ScramCredential
	// known is false when the user has no credential: the exchange goes on
	// with a made-up one, so the answer cannot tell unknown users apart,
	// and fails at the proof.
	known bool
	// tokenAuth is set for tokenauth=true: the user is a delegation
	// token's id, and token is that token.
	tokenAuth bool
	token     TokenInfo
}

func newScramExchange(m ScramMechanism, credentials CredentialStore) *scramExchange {
	return &scramExchange{mechanism: m, credentials: credentials}
}

func (e *scramExchange) failure() error {
	return fmt.Errorf("%w: Authentication failed during authentication due to invalid credentials with SASL mechanism %s", ErrAuthenticationFailed, e.mechanism.Name())
}

func (e *scramExchange) next(token []byte) ([]byte, *outcome, error) {
	switch e.step {
	case 0:
		first, err := ParseScramClientFirst(string(token))
		if err != nil {
			return nil, nil, e.failure()
		}
		e.first = first
		switch {
		case first.Extensions["tokenauth"] == "true":
			if tokens, ok := e.credentials.(TokenCredentialStore); ok {
				e.credential, e.token, e.known = tokens.DelegationTokenCredential(first.User, e.mechanism)
				e.tokenAuth = true
			}
		case e.credentials != nil:
			e.credential, e.known = e.credentials.ScramCredential(first.User, e.mechanism)
		}
		if !e.known {
			salt := make([]byte, 32)
			rand.Read(salt)
			e.credential = ScramCredential{Salt: salt, Iterations: ScramMinIterations}
		}
		random := make([]byte, scramNonceBytes)
		rand.Read(random)
		e.nonce = first.Nonce + base64.RawURLEncoding.EncodeToString(random)
		e.serverFirst = "r=" + e.nonce + ",s=" + base64.StdEncoding.EncodeToString(e.credential.Salt) +
			",i=" + strconv.Itoa(int(e.credential.Iterations))
		e.step = 1
		return []byte(e.serverFirst), nil, nil
	case 1:
		e.step = 2
		message := string(token)
		withoutProof, proofAttr, ok := strings.Cut(message, ",p=")
		if !ok || strings.Contains(proofAttr, ",") {
			return nil, nil, e.failure()
		}
		attributes := strings.Split(withoutProof, ",")
		if len(attributes) < 2 || attributes[0] != "c="+base64.StdEncoding.EncodeToString([]byte(e.first.GS2Header)) ||
			attributes[1] != "r="+e.nonce {
			return nil, nil, e.failure()
		}
		proof, err := base64.StdEncoding.DecodeString(proofAttr)
		if err != nil || !e.known {
			return nil, nil, e.failure()
		}
		authMessage := []byte(e.first.Bare + "," + e.serverFirst + "," + withoutProof)
		clientSignature := hmacOf(e.mechanism, e.credential.StoredKey, authMessage)
		if len(proof) != len(clientSignature) {
			return nil, nil, e.failure()
		}
		clientKey := make([]byte, len(proof))
		subtle.XORBytes(clientKey, proof, clientSignature)
		computed := e.mechanism.hash()()
		computed.Write(clientKey)
		if subtle.ConstantTimeCompare(computed.Sum(nil), e.credential.StoredKey) != 1 {
			return nil, nil, e.failure()
		}
		serverSignature := hmacOf(e.mechanism, e.credential.ServerKey, authMessage)
		reply := "v=" + base64.StdEncoding.EncodeToString(serverSignature)
		if e.tokenAuth {
			return []byte(reply), &outcome{principal: e.token.Owner, expiresAt: e.token.ExpiresAt, tokenAuthenticated: true, tokenValid: e.token.Valid}, nil
		}
		return []byte(reply), &outcome{principal: "User:" + e.first.User}, nil
	}
	return nil, nil, fmt.Errorf("%w: SCRAM exchange already complete", ErrIllegalSASLState)
}
