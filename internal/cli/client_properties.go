package cli

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// clientPropertiesBytesMax bounds a --command-config file; real ones are a
// few hundred bytes.
const clientPropertiesBytesMax = 1 << 20

// clientProperties are the Java client properties the CLI understands from
// a --command-config file.
type clientProperties struct {
	clientID         string
	requestTimeout   time.Duration
	bootstrapServers string
	// securityProtocol is security.protocol, upper-cased; empty means
	// PLAINTEXT. ssl holds the ssl.* properties (see client_tls.go).
	securityProtocol string
	ssl              map[string]string
	sasl             saslProperties
}

// loadClientProperties reads a Java-style properties file (key=value or
// key: value, # and ! comments). Properties the CLI does not support are
// returned as warnings rather than errors, so one file can be shared with
// Kafka's own tools; a security.protocol the CLI cannot speak yet is an
// error, because connecting in plaintext to a SASL listener would only hang.
func loadClientProperties(path string) (clientProperties, []string, error) {
	var props clientProperties
	info, err := os.Stat(path)
	if err != nil {
		return props, nil, fmt.Errorf("--command-config: %w", err)
	}
	if info.Size() > clientPropertiesBytesMax {
		return props, nil, fmt.Errorf("--command-config: %s is larger than %d bytes", path, clientPropertiesBytesMax)
	}
	file, err := os.Open(path)
	if err != nil {
		return props, nil, fmt.Errorf("--command-config: %w", err)
	}
	defer file.Close()

	var ignored []string
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 0, 4096), clientPropertiesBytesMax)
	for lineNumber := 1; scanner.Scan(); lineNumber++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		separator := strings.IndexAny(line, "=:")
		if separator < 0 {
			return props, nil, fmt.Errorf("--command-config %s:%d: expected key=value, got %q", path, lineNumber, line)
		}
		key := strings.TrimSpace(line[:separator])
		value := strings.TrimSpace(line[separator+1:])
		switch key {
		case "client.id":
			props.clientID = value
		case "bootstrap.servers":
			props.bootstrapServers = value
		case "request.timeout.ms":
			ms, err := strconv.ParseInt(value, 10, 64)
			if err != nil || ms <= 0 {
				return props, nil, fmt.Errorf("--command-config %s:%d: request.timeout.ms must be a positive integer, got %q", path, lineNumber, value)
			}
			props.requestTimeout = time.Duration(ms) * time.Millisecond
		case "security.protocol":
			protocol := strings.ToUpper(value)
			switch protocol {
			case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
			default:
				return props, nil, fmt.Errorf("--command-config %s:%d: security.protocol=%s is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", path, lineNumber, value)
			}
			props.securityProtocol = protocol
			props.sasl.protocol = protocol
		default:
			if isClientTLSProperty(key) {
				if props.ssl == nil {
					props.ssl = make(map[string]string)
				}
				props.ssl[key] = value
				continue
			}
			if !props.sasl.set(key, value) {
				ignored = append(ignored, key)
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return props, nil, fmt.Errorf("--command-config %s: %w", path, err)
	}
	sort.Strings(ignored)
	var warnings []string
	for _, key := range ignored {
		warnings = append(warnings, fmt.Sprintf("--command-config: ignoring unsupported client property %s", key))
	}
	return props, warnings, nil
}
